package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/e2e"
)

// auditChain is one risk's life as a client writes it: a keyed create (version 1),
// two keyed PATCHes with If-Match (versions 2 and 3, each a new title) and, for
// every other chain, a keyed DELETE with If-Match. Each step is retried with its own
// key until it answers 2xx, however often the server dies meanwhile.
type auditChain struct {
	n    int
	del  bool
	id   string // the risk's ID, from the create's first 2xx
	done bool   // every step answered 2xx
}

// auditUpdates is how many PATCHes a chain sends; the risk ends at version 1+this.
const auditUpdates = 2

// auditRun drives chains against one instance that crash SIGKILLs and restarts.
type auditRun struct {
	client    *e2e.Client
	in        *e2e.Instance
	prefix    string
	netErrors atomic.Int64 // attempts cut by a kill or refused while it was down
	cut       atomic.Int64 // of these, attempts the kill cut after they were sent
	replayed  atomic.Int64 // steps whose lost attempt had committed: answered by a replay
	mu        sync.Mutex
	problems  []string
}

func (r *auditRun) title(ch *auditChain, version int) string {
	return fmt.Sprintf("%s chain %03d v%d", r.prefix, ch.n, version)
}

func (r *auditRun) problemf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

// drive writes ch's steps in order, each until it answers 2xx; an answer that must
// not be retried ends the chain as a problem.
func (r *auditRun) drive(ctx context.Context, ch *auditChain) {
	body, _ := json.Marshal(map[string]any{"title": r.title(ch, 1), "category": "Resilience", "likelihood": 2, "impact": 3})
	a, ok := r.step(ctx, ch, "create", http.MethodPost, "/v2/risks", 0, body)
	if !ok {
		return
	}
	id, err := e2e.RiskID(a.Body)
	if err != nil {
		r.problemf("chain %d: create answered %s: %v", ch.n, a, err)
		return
	}
	ch.id = id
	for v := 2; v <= 1+auditUpdates; v++ {
		body, _ := json.Marshal(map[string]any{"title": r.title(ch, v)})
		a, ok := r.step(ctx, ch, fmt.Sprintf("update%d", v), http.MethodPatch, "/v2/risks/"+id, v-1, body)
		if !ok {
			return
		}
		var got struct {
			Version int64  `json:"version"`
			Title   string `json:"title"`
		}
		if json.Unmarshal(a.Body, &got) != nil || got.Version != int64(v) || got.Title != r.title(ch, v) {
			r.problemf("chain %d: PATCH to version %d answered %s", ch.n, v, a)
			return
		}
	}
	if ch.del {
		if _, ok := r.step(ctx, ch, "delete", http.MethodDelete, "/v2/risks/"+id, 1+auditUpdates, nil); !ok {
			return
		}
	}
	ch.done = true
}

// step sends one write with its key (and If-Match of version ifMatch, if not 0) until
// it answers 2xx, retrying on network errors, 409 (key in flight), 503 and 429 with
// a short jittered backoff; false for any other answer or when ctx ends.
func (r *auditRun) step(ctx context.Context, ch *auditChain, name, method, path string, ifMatch int, body []byte) (e2e.Answer, bool) {
	h := http.Header{"Idempotency-Key": {fmt.Sprintf("%s-%03d-%s", r.prefix, ch.n, name)}}
	if ifMatch > 0 {
		h.Set("If-Match", strconv.Quote(strconv.Itoa(ifMatch)))
	}
	time.Sleep(rand.N(15 * time.Millisecond)) // spread the chains' steps over the uptime
	for attempt := 0; ; attempt++ {
		a := r.client.Send(ctx, method, r.in.URL(), path, h, body)
		switch {
		case ctx.Err() != nil:
			r.problemf("chain %d %s: no 2xx before the deadline; last answer %s", ch.n, name, a)
			return a, false
		case a.Err != nil:
			r.netErrors.Add(1)
			if !errors.Is(a.Err, syscall.ECONNREFUSED) {
				r.cut.Add(1)
			}
		case a.Status >= 200 && a.Status < 300:
			if a.Replayed == "true" {
				r.replayed.Add(1)
			}
			return a, true
		case a.Status == http.StatusConflict || a.Status == http.StatusServiceUnavailable || a.Status == http.StatusTooManyRequests:
		default:
			r.problemf("chain %d %s: unexpected answer %s", ch.n, name, a)
			return a, false
		}
		b := 10 * time.Millisecond << min(attempt, 4)
		time.Sleep(b/2 + rand.N(b/2))
	}
}

// crash releases chains in kills waves, each spread over a random uptime of
// 100–400 ms and ended by a SIGKILL of the instance and its restart (every third on
// a new port), then the rest; it closes release when done and returns the kills.
func (r *auditRun) crash(t *testing.T, ctx context.Context, rng *rand.Rand, chains []*auditChain, kills int,
	release chan<- *auditChain) int {
	t.Helper()
	defer close(release)
	next := 0
	for wave := 0; wave < kills && ctx.Err() == nil; wave++ {
		n := (len(chains) - next) / (kills - wave)
		up := 100*time.Millisecond + time.Duration(rng.Int64N(int64(300*time.Millisecond)))
		for range n {
			release <- chains[next]
			next++
			time.Sleep(up / time.Duration(n+1))
		}
		if err := r.in.Kill(); err != nil {
			t.Fatal(err)
		}
		restart := r.in.Restart
		if wave%3 == 2 {
			restart = r.in.RestartNewPort
		}
		rctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		err := restart(rctx)
		cancel()
		if err != nil {
			t.Fatalf("restart after kill %d: %v\n%s", wave+1, err, r.in.LogTail(4096))
		}
	}
	for ; next < len(chains); next++ {
		release <- chains[next]
	}
	return kills
}

// TestCrashAuditTrail is issue 24's crash test of the audit log: 8 clients write
// risks' whole lives (create, two updates, a delete for half of them) with a key per
// step while the one server process is SIGKILLed and restarted again and again;
// every step is retried with its key until it answers 2xx. Afterwards the database
// must hold exactly one audit entry — and one event — per committed change, each
// with the change's own values and author, and none for a change that did not
// commit (checkAuditTrail). -e2e.scale multiplies the chains and the kills.
func TestCrashAuditTrail(t *testing.T) {
	lease := 5 * time.Second
	url, creds, insts := startInstances(t, 1, lease)
	rng := newRand(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(max(1, *scale)*float64(3*time.Minute)))
	defer cancel()
	client := e2e.NewClient(creds.APIKey, 16)
	defer client.Close()
	run := &auditRun{client: client, in: insts[0], prefix: fmt.Sprintf("%s-%d", t.Name(), rng.Uint32())}
	chains := make([]*auditChain, scaled(60))
	for i := range chains {
		chains[i] = &auditChain{n: i, del: i%2 == 1}
	}
	release := make(chan *auditChain, len(chains))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ch := range release {
				run.drive(ctx, ch)
			}
		}()
	}
	start := time.Now()
	kills := run.crash(t, ctx, rng, chains, scaled(8), release)
	wg.Wait()
	t.Logf("%d chains, %d kills, %d attempts refused or cut by them (%d cut in flight), %d steps answered by a replay, %s",
		len(chains), kills, run.netErrors.Load(), run.cut.Load(), run.replayed.Load(), time.Since(start).Round(time.Millisecond))
	for _, p := range run.problems {
		t.Error(p)
	}
	if run.cut.Load() == 0 {
		t.Error("no request in flight was cut by a kill: the test did not test anything")
	}
	checkAuditTrail(t, ctx, url, creds, run, chains)
	if t.Failed() {
		t.Logf("--- log tail:\n%s", insts[0].LogTail(8<<10))
	}
}
