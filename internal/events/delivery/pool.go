package delivery

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// pool tracks this instance's claimed deliveries: attempts in flight, and claims
// waiting for a slot of their endpoint.
type pool struct {
	wg       sync.WaitGroup
	mu       sync.Mutex
	inFlight map[string]int       // endpoint ID → attempts in flight
	queued   map[string][]*Job    // endpoint ID → claims waiting for a slot
	tenants  map[string]int       // tenant ID → its attempts in flight plus claims waiting
	slow     map[string]time.Time // endpoint ID → until when it counts as slow (slowAfter)
	total    int                  // attempts in flight plus claims waiting
	done     chan struct{}        // signalled when an attempt ends: a slot is free
	results  chan Settlement      // attempts' results, for the settler
}

// An endpoint counts as slow for slowFor once one of its attempts has run for
// slowAfter, and again as fast once an attempt of its ends sooner: a slow
// endpoint's deliveries are claimed one at a time, as its slots free up
// (Skip.Slow), and its claims waiting for a slot go back to the store the moment
// it turns slow, so they do not sit on its tenant's share. Real time, not
// Worker.Now: it measures the receiver.
const (
	slowAfter = time.Second
	slowFor   = time.Minute
)

// fill claims due deliveries while this instance has free slots, and starts them.
// Endpoints at their bound and tenants at their share are left out of the claim,
// which brings at most PerTenant at a time; a claim may still bring more for one
// endpoint than it has slots, and those wait here for one. It reports whether due
// deliveries may have been left in the store: its last claim came back full or
// skipped endpoints or tenants, or no slot was free.
func (w *Worker) fill(ctx context.Context, p *pool) (more bool) {
	for ctx.Err() == nil {
		p.mu.Lock()
		free := w.Concurrency - p.total
		skip := &Skip{}
		for ep, n := range p.inFlight {
			if n >= w.PerEndpoint {
				skip.Endpoints = append(skip.Endpoints, ep)
			}
		}
		limit := min(free, w.PerTenant)
		now := time.Now()
		for ep, until := range p.slow {
			switch {
			case !now.Before(until):
				delete(p.slow, ep)
			case p.inFlight[ep] >= w.PerEndpoint:
			case len(skip.Slow) < limit/2: // the other half for the rest
				skip.Slow = append(skip.Slow, ep)
			default: // not this time: never more than one of a slow endpoint's
				skip.Endpoints = append(skip.Endpoints, ep)
			}
		}
		for t, n := range p.tenants {
			if n >= w.PerTenant {
				skip.Tenants = append(skip.Tenants, t)
			}
		}
		p.mu.Unlock()
		if free <= 0 {
			return true
		}
		jobs, err := w.Store.Claim(ctx, w.Now(), w.Lease, limit, skip)
		if err != nil {
			if ctx.Err() == nil {
				w.Logger.Warn("webhook delivery: claim failed", slog.String("error", err.Error()))
			}
			return false // the next poll tries again
		}
		p.mu.Lock()
		for _, j := range jobs {
			p.total++
			p.tenants[j.TenantID]++
			p.queued[j.EndpointID] = append(p.queued[j.EndpointID], j)
			w.next(ctx, p, j.EndpointID)
		}
		p.mu.Unlock()
		if len(jobs) < limit {
			return len(skip.Endpoints)+len(skip.Tenants)+len(skip.Slow) > 0
		}
	}
	return false
}

// next starts endpoint ep's waiting claims while it has free slots. A claim whose
// lease would end before an attempt could finish goes back to the store instead, due
// at once. The caller holds p.mu.
func (w *Worker) next(ctx context.Context, p *pool, ep string) {
	// Attempts outlive ctx's end by at most AttemptTimeout, so a shutdown does not
	// cut a delivery the receiver may already have taken.
	actx := context.WithoutCancel(ctx)
	for len(p.queued[ep]) > 0 && p.inFlight[ep] < w.PerEndpoint {
		j := p.queued[ep][0]
		p.queued[ep] = p.queued[ep][1:]
		if j.LeaseEnds.Sub(w.Now()) < AttemptTimeout+time.Second {
			p.done1(j)
			go w.release(actx, j)
			continue
		}
		p.inFlight[ep]++
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			started := time.Now()
			turned := make(chan struct{})
			slow := time.AfterFunc(slowAfter, func() { defer close(turned); w.turnedSlow(actx, p, ep) })
			s := w.attempt(actx, j)
			if !slow.Stop() {
				<-turned
			}
			p.results <- s
			p.mu.Lock()
			if time.Since(started) < slowAfter {
				delete(p.slow, ep)
			}
			p.inFlight[ep]--
			p.done1(j)
			w.next(ctx, p, ep)
			if p.inFlight[ep] == 0 && len(p.queued[ep]) == 0 {
				delete(p.inFlight, ep)
				delete(p.queued, ep)
			}
			p.mu.Unlock()
			select {
			case p.done <- struct{}{}:
			default:
			}
		}()
	}
}

// turnedSlow marks ep slow, one of its attempts having run for slowAfter, and gives
// back its claims waiting for a slot: its tenant's share is free for its other
// endpoints, and another claim takes them one at a time.
func (w *Worker) turnedSlow(ctx context.Context, p *pool, ep string) {
	p.mu.Lock()
	p.slow[ep] = time.Now().Add(slowFor)
	waiting := p.queued[ep]
	delete(p.queued, ep)
	for _, j := range waiting {
		p.done1(j)
	}
	p.mu.Unlock()
	for _, j := range waiting {
		w.release(ctx, j)
	}
	if len(waiting) > 0 {
		select {
		case p.done <- struct{}{}:
		default:
		}
	}
}

// done1 forgets j, attempted or given back. The caller holds p.mu.
func (p *pool) done1(j *Job) {
	p.total--
	if p.tenants[j.TenantID]--; p.tenants[j.TenantID] <= 0 {
		delete(p.tenants, j.TenantID)
	}
}

// releaseQueued gives back every claim still waiting for a slot, so that another
// instance can send them at once rather than when their leases end.
func (w *Worker) releaseQueued(ctx context.Context, p *pool) {
	p.mu.Lock()
	var jobs []*Job
	for ep, js := range p.queued {
		jobs = append(jobs, js...)
		delete(p.queued, ep)
	}
	for _, j := range jobs {
		p.done1(j)
	}
	p.mu.Unlock()
	for _, j := range jobs {
		w.release(ctx, j)
	}
}

func (w *Worker) release(ctx context.Context, j *Job) {
	if err := w.Store.Release(ctx, j); err != nil && !errors.Is(err, ErrLeaseLost) {
		w.Logger.Warn("webhook delivery: release failed", slog.String("error", err.Error()))
	}
}
