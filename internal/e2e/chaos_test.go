package e2e_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/e2e"
)

// chaos is a kill schedule.
type chaos struct {
	// kills SIGKILLs in all; the write test's keys are released in as many waves.
	kills int
	// Each wave releases its keys evenly over a random uptime in [minUp, maxUp),
	// then SIGKILLs an instance.
	minUp, maxUp time.Duration
	// Every newPortEvery-th restart binds a new port (0: always the same port).
	newPortEvery int
	// burst keys of each wave (at most all of them) are released at once a few
	// milliseconds before its kill, so that every kill finds writes in flight however
	// fast the machine answers; the others are spread over the uptime.
	burst int
}

// chaosResult counts what run did.
type chaosResult struct {
	kills, restarts, newPorts int
	restartTime               time.Duration // summed
}

// run releases w's keys in c.kills waves and, at the end of each, SIGKILLs a random running
// instance and restarts it: at once and in the background when other instances
// can serve meanwhile (never all down), else before the next wave. It returns when
// every key is released and every instance runs again, or ctx ends.
func (c chaos) run(t *testing.T, ctx context.Context, rng *rand.Rand, w *e2e.WriteTest, keys int, insts []*e2e.Instance) chaosResult {
	t.Helper()
	var (
		res     chaosResult
		mu      sync.Mutex
		down    = map[*e2e.Instance]bool{}
		wg      sync.WaitGroup
		errs    []error
		restart = func(in *e2e.Instance, newPort bool) {
			start := time.Now()
			rctx, cancel := context.WithTimeout(ctx, 90*time.Second)
			defer cancel()
			var err error
			if newPort {
				err = in.RestartNewPort(rctx)
			} else {
				err = in.Restart(rctx)
			}
			mu.Lock()
			defer mu.Unlock()
			delete(down, in)
			res.restartTime += time.Since(start)
			if err != nil {
				errs = append(errs, err)
				return
			}
			res.restarts++
		}
	)
	for wave := 0; wave < c.kills && ctx.Err() == nil; wave++ {
		n := (keys - w.Issued() + (c.kills - wave - 1)) / (c.kills - wave)
		up := c.minUp + time.Duration(rng.Int64N(int64(c.maxUp-c.minUp)))
		burst := min(n, c.burst)
		spread := n - burst
		if spread == 0 {
			sleepCtx(ctx, up)
		}
		for range spread {
			w.Issue(1)
			if sleepCtx(ctx, up/time.Duration(spread)) != nil {
				break
			}
		}
		w.Issue(burst)
		sleepCtx(ctx, time.Duration(rng.Int64N(int64(3*time.Millisecond))))
		// Pick a victim among the running instances; with one left, wait for others.
		var victim *e2e.Instance
		for victim == nil && ctx.Err() == nil {
			mu.Lock()
			var up []*e2e.Instance
			for _, in := range insts {
				if !down[in] {
					up = append(up, in)
				}
			}
			if len(insts) == 1 || len(up) >= 2 {
				victim = up[rng.IntN(len(up))]
				down[victim] = true
			}
			mu.Unlock()
			if victim == nil {
				sleepCtx(ctx, 10*time.Millisecond)
			}
		}
		if victim == nil {
			break
		}
		if err := victim.Kill(); err != nil {
			t.Fatal(err)
		}
		res.kills++
		newPort := c.newPortEvery > 0 && res.kills%c.newPortEvery == 0
		if newPort {
			res.newPorts++
		}
		if len(insts) == 1 {
			restart(victim, newPort)
		} else {
			wg.Add(1)
			go func() { defer wg.Done(); restart(victim, newPort) }()
		}
	}
	wg.Wait()
	for _, err := range errs {
		t.Errorf("restart: %v", err)
	}
	if len(errs) > 0 {
		t.FailNow()
	}
	return res
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
