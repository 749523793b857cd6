package e2e_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/e2e"
)

// envFailovers sets the number of failovers of TestFailover* (default
// scaled(2): 2, or 20 with -e2e.scale=10); each brings 150 keys of write load.
const envFailovers = "E2E_FAILOVERS"

// failovers is a schedule of PostgreSQL failovers under write load: replication to
// the standby of pair held back for a moment, the primary stopped as a crash stops
// it, the standby promoted after a failover manager's detection delay, and — before
// the next — the old primary rebuilt as the new one's standby. insts are the
// riskapi instances on pair.URL().
type failovers struct {
	pair   *e2e.PGPair
	insts  []*e2e.Instance
	client *e2e.Client
	rounds int
	// outages is, per failover, how long from the stop until every instance was
	// ready (/readyz 200) on the new primary.
	outages []time.Duration
}

// run releases w's keys in f.rounds rounds: in each, half of the round's keys go
// out before the failover, an eighth while replication is held back, an eighth
// during the detection delay, the rest once the instances reach the new primary.
func (f *failovers) run(t *testing.T, ctx context.Context, rng *rand.Rand, w *e2e.WriteTest, keys int) {
	t.Helper()
	issue := func(n int, over time.Duration) {
		for range n {
			w.Issue(1)
			if sleepCtx(ctx, over/time.Duration(max(1, n))) != nil {
				return
			}
		}
	}
	for round := 0; round < f.rounds && ctx.Err() == nil; round++ {
		n := (keys - w.Issued() + (f.rounds - round - 1)) / (f.rounds - round)
		issue(n/2, time.Duration(500+rng.IntN(700))*time.Millisecond)
		// The standby falls behind, as over a slow or partitioned link, and the
		// primary fails while it is: what it committed since is only on it.
		f.pair.StallReplication()
		lag := time.Duration(200+rng.IntN(300)) * time.Millisecond
		issue(n/8, lag)
		detect := time.Duration(200+rng.IntN(600)) * time.Millisecond
		began := time.Now()
		go issue(n/8, detect) // writes meet the outage; w.Issue is safe for concurrent use
		old := f.pair.Primary.Port()
		if err := f.pair.Failover(ctx, detect); err != nil {
			t.Fatalf("failover %d: %v\n--- new primary's log:\n%s", round+1, err, f.pair.Primary.LogTail(4096))
		}
		promoted := time.Since(began)
		f.waitReady(t, ctx, round)
		f.outages = append(f.outages, time.Since(began))
		t.Logf("failover %d: replication held back %s, primary :%d stopped, :%d promoted %s later (detection %s), "+
			"every instance ready %s after the stop", round+1, lag, old, f.pair.Primary.Port(), promoted.Round(time.Millisecond),
			detect, time.Since(began).Round(time.Millisecond))
		issue(n-n/2-n/8-n/8, 500*time.Millisecond)
		if round+1 < f.rounds {
			if err := f.pair.Rejoin(ctx); err != nil {
				t.Fatalf("failover %d: the old primary does not rejoin as a standby: %v\n--- its log:\n%s", round+1, err,
					f.pair.Standby.LogTail(4096))
			}
		}
	}
	w.Issue(keys)
}

// waitReady waits until every instance answers /readyz 200 — takes a committed write
// on the new primary — with the process it had before the failover.
func (f *failovers) waitReady(t *testing.T, ctx context.Context, round int) {
	t.Helper()
	for _, in := range f.insts {
		for {
			a := f.client.Do(ctx, http.MethodGet, in.URL(), "/readyz", "", nil)
			if a.Err == nil && a.Status == http.StatusOK {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("failover %d: %s is not ready on the new primary: %s", round+1, in.Name(), a)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// failoverRounds is E2E_FAILOVERS, else scaled(2).
func failoverRounds(t *testing.T) int {
	s := os.Getenv(envFailovers)
	if s == "" {
		return scaled(2)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", envFailovers, s)
	}
	return n
}

// runFailovers starts a primary and a streaming standby (synchronous or not), two
// riskapi instances on their multi-host URL, and keyed write load through
// failoverRounds failovers, each key retried with the same key on 503 and 409 as
// docs/errors.md says; then every key is sent once more and the tenant's risks
// compared with the answers (writeScenario). It checks what holds either way: the
// instances reach each new primary without a restart, every answer is an HTTP one
// (the instances never stop), and every one not 2xx a 503 or 409 with Retry-After,
// each 503 with an outcome the risks bear out. It returns the report.
func runFailovers(t *testing.T, sync bool) e2e.Report {
	pair := e2e.StartPGPairT(t, sync)
	url := pair.URL()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := e2e.CLI(ctx, e2e.Binary(t), url, t.TempDir(), "migrate"); err != nil {
		t.Fatal(err)
	}
	creds := e2e.ProvisionT(t, url, t.Name())
	lease := 5 * time.Second
	var insts []*e2e.Instance
	for i := range 2 {
		insts = append(insts, e2e.StartT(t, e2e.Config{DatabaseURL: url, Name: fmt.Sprintf("api%d", i+1), Lease: lease}))
	}
	client := e2e.NewClient(creds.APIKey, 4)
	defer client.Close()
	rounds := failoverRounds(t)
	f := &failovers{pair: pair, insts: insts, client: client, rounds: rounds}
	rep := writeScenario{keys: 150 * rounds, clients: 8, dup: 1, lease: lease, failovers: f, reportLosses: !sync,
		loadBound: time.Duration(rounds)*30*time.Second + time.Minute}.
		run(t, url, creds, insts)
	t.Logf("%d failovers (%s replication): from the stop to every instance ready: %v", rounds,
		map[bool]string{true: "synchronous", false: "asynchronous"}[sync], f.outages)
	for _, in := range insts {
		if in.Starts() != 1 {
			t.Errorf("%s was started %d times: it must reach the new primary without a restart", in.Name(), in.Starts())
		}
	}
	if rep.NetErrors != 0 {
		t.Errorf("%d requests had no HTTP answer: every answer during a failover is an HTTP one (a 503)", rep.NetErrors)
	}
	if rep.NotExecuted+rep.Unknown == 0 {
		t.Errorf("no write met a failover: the test did not test anything (%s)", rep)
	}
	return rep
}

// TestFailoverSynchronous is issue 28's failover test (contract §16; docs/deploying.md,
// Failover): with synchronous replication no acknowledged write is lost across
// failovers and none is doubled by its retry (runFailovers).
func TestFailoverSynchronous(t *testing.T) {
	rep := runFailovers(t, true)
	if rep.Lost != 0 {
		t.Errorf("%d acknowledged writes lost with synchronous replication", rep.Lost)
	}
}

// TestFailoverAsynchronous is the same run with asynchronous replication, which can
// lose what the old primary acknowledged but had not yet sent: the test reports how
// many acknowledged writes were lost (and so ran again on their key's retry) rather
// than failing on them — docs/deploying.md says why to replicate synchronously —
// and fails on everything else runFailovers checks.
func TestFailoverAsynchronous(t *testing.T) {
	rep := runFailovers(t, false)
	t.Logf("asynchronous replication: %d of %d keys lost the write their 201 acknowledged (run again by the retry: "+
		"a doubled side effect for the client)", rep.Lost, rep.Keys)
}
