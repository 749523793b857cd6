package e2e_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/e2e"
)

// writeScenario is a keyed-write run against instances, under an optional kill
// schedule, checked end to end.
type writeScenario struct {
	keys, clients, dup int
	lease              time.Duration
	chaos              *chaos       // nil: no kills
	faults             *storeFaults // nil: no store outages
	failovers          *failovers   // nil: no failover of PostgreSQL
	// reportLosses logs acknowledged writes the store lost (Report.Losses) instead
	// of failing on them: what an asynchronous standby's promotion costs is reported.
	reportLosses bool
	// loadBound bounds the load phase. Optional. Default 2 minutes × -e2e.scale.
	loadBound time.Duration
}

func (s writeScenario) run(t *testing.T, url string, creds e2e.Credentials, insts []*e2e.Instance) e2e.Report {
	t.Helper()
	rng := newRand(t)
	// The whole run is bounded; every phase below is bounded again within it.
	loadBound := s.loadBound
	if loadBound <= 0 {
		loadBound = time.Duration(max(1, *scale) * float64(2*time.Minute))
	}
	ctx, cancel := context.WithTimeout(context.Background(), loadBound+2*time.Minute)
	defer cancel()
	client := e2e.NewClient(creds.APIKey, s.clients*s.dup+4)
	defer client.Close()
	targets := func() []string {
		urls := make([]string, len(insts))
		for i, in := range insts {
			urls[i] = in.URL()
		}
		return urls
	}
	w := e2e.NewWriteTest(e2e.WriteTestConfig{
		Client: client, Targets: targets, Keys: s.keys, Clients: s.clients, Dup: s.dup,
		Prefix: fmt.Sprintf("%s-%d", t.Name(), rng.Uint32()), Lease: s.lease,
	})
	start := time.Now()
	loadCtx, cancelLoad := context.WithTimeout(ctx, loadBound)
	defer cancelLoad()
	w.Start(loadCtx)
	var cr chaosResult
	if s.chaos != nil {
		cr = s.chaos.run(t, loadCtx, rng, w, s.keys, insts)
	}
	if s.faults != nil {
		s.faults.run(t, loadCtx, rng, w, s.keys)
	}
	if s.failovers != nil {
		s.failovers.run(t, loadCtx, rng, w, s.keys)
	}
	w.Finish()
	loadTook := time.Since(start)

	// No more kills: every key once more, each bounded well past the lease.
	for _, in := range insts {
		if !in.Running() {
			t.Fatalf("%s is not running after the kills", in.Name())
		}
	}
	finalCtx, cancelFinal := context.WithTimeout(ctx, 2*s.lease+30*time.Second)
	defer cancelFinal()
	w.Verify(finalCtx)
	rep := w.Check(ctx, insts[0].URL())
	t.Logf("%d instance(s), %d clients x %d senders, lease %s: load %s, kills=%d (restarts %d, %d on a new port, mean restart %s)",
		len(insts), s.clients, s.dup, s.lease, loadTook.Round(time.Millisecond), cr.kills, cr.restarts, cr.newPorts,
		(cr.restartTime / time.Duration(max(1, cr.restarts))).Round(time.Millisecond))
	t.Logf("report: %s", rep)
	for _, p := range rep.Problems {
		t.Error(p)
	}
	for _, p := range rep.Losses {
		if s.reportLosses {
			t.Log(p)
		} else {
			t.Error(p)
		}
	}
	if t.Failed() {
		for _, in := range insts {
			t.Logf("--- %s log tail:\n%s", in.Name(), in.LogTail(8<<10))
		}
	}
	return rep
}

// startInstances provisions a tenant on a fresh database of the store under test and
// starts n instances on it.
func startInstances(t *testing.T, n int, lease time.Duration) (string, e2e.Credentials, []*e2e.Instance) {
	t.Helper()
	url := dbtest.URL(t)
	creds := e2e.ProvisionT(t, url, t.Name())
	var insts []*e2e.Instance
	for i := range n {
		insts = append(insts, e2e.StartT(t, e2e.Config{DatabaseURL: url, Name: fmt.Sprintf("api%d", i+1), Lease: lease}))
	}
	return url, creds, insts
}

// TestCrashKeyedWrites is issue 3's crash test: one real server process, SIGKILLed at
// random moments while 8 clients write 300 keys (each key its own body), restarted
// each time; clients retry the same key on network errors, 409 and 503. Afterwards
// every key is retried once more. No acknowledged write may be lost, none doubled,
// no key blocked past the lease.
func TestCrashKeyedWrites(t *testing.T) {
	lease := 5 * time.Second
	url, creds, insts := startInstances(t, 1, lease)
	rep := writeScenario{keys: scaled(300), clients: 8, dup: 1, lease: lease,
		chaos: &chaos{kills: scaled(10), minUp: 50 * time.Millisecond, maxUp: 300 * time.Millisecond, newPortEvery: 4, burst: 8},
	}.run(t, url, creds, insts)
	if rep.NetErrors == 0 {
		t.Errorf("no request was cut by a kill: the test did not test anything (%s)", rep)
	}
}
