package requestlog

import "sync"

// queue holds the entries waiting for their insert, per tenant, up to a size. When
// it is full the entry dropped is one of the tenant with the most waiting — the new
// one if that is its own tenant, else that tenant's newest — so that one tenant's
// flood cannot push another's entries out of the log (docs/requests.md).
type queue struct {
	mu       sync.Mutex
	size     int
	n        int
	byTenant map[string][]*Entry
	order    []string // tenants with entries waiting, in arrival order of their first
	batch    int      // a full batch: at this many waiting, ready is signalled
	// ready is signalled (capacity 1) when an entry arrives in an empty queue (the
	// writer starts its FlushInterval) and when a batch is full, not on every push:
	// waking the writer once per request cost every request a context switch.
	ready chan struct{}
}

func newQueue(size, batch int) *queue {
	return &queue{size: size, batch: batch, byTenant: map[string][]*Entry{}, ready: make(chan struct{}, 1)}
}

// push adds e, dropping one entry when the queue is full; it reports whether e was
// kept, and whether any entry was dropped.
func (q *queue) push(e *Entry) (kept, dropped bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.n >= q.size {
		most := q.most()
		if len(q.byTenant[e.TenantID]) >= len(q.byTenant[most]) {
			return false, true
		}
		es := q.byTenant[most]
		es[len(es)-1] = nil
		q.byTenant[most] = es[:len(es)-1]
		q.n--
		dropped = true
	}
	if len(q.byTenant[e.TenantID]) == 0 {
		q.order = append(q.order, e.TenantID)
	}
	q.byTenant[e.TenantID] = append(q.byTenant[e.TenantID], e)
	q.n++
	if q.n == 1 || q.n >= q.batch {
		select {
		case q.ready <- struct{}{}:
		default:
		}
	}
	return true, dropped
}

// most is the tenant with the most entries waiting. The caller holds q.mu.
func (q *queue) most() string {
	best, n := "", -1
	for t, es := range q.byTenant {
		if len(es) > n {
			best, n = t, len(es)
		}
	}
	return best
}

// len is how many entries wait.
func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

// take removes up to max entries, taking from each waiting tenant in turn.
func (q *queue) take(max int) []*Entry {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []*Entry
	for len(out) < max && q.n > 0 {
		for i := 0; i < len(q.order) && len(out) < max; i++ {
			t := q.order[i]
			es := q.byTenant[t]
			out = append(out, es[0])
			es[0] = nil
			q.byTenant[t] = es[1:]
			q.n--
		}
		q.compact()
	}
	return out
}

// compact forgets the tenants with nothing waiting. The caller holds q.mu.
func (q *queue) compact() {
	kept := q.order[:0]
	for _, t := range q.order {
		if len(q.byTenant[t]) > 0 {
			kept = append(kept, t)
		} else {
			delete(q.byTenant, t)
		}
	}
	q.order = kept
}
