package e2e_test

import (
	"context"
	"math/rand/v2"
	"net/url"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/e2e"
	"github.com/riskapi/riskapi/internal/netfault"
)

// storeFaults is a schedule of store outages: a TCP proxy between riskapi and
// PostgreSQL stalls, cuts, resets and refuses connections, and loses the answers to
// COMMITs it lets through, between stretches of normal service.
type storeFaults struct {
	px *netfault.Proxy
	// waves outages in all; the write test's keys are released in as many waves,
	// each spread over a random stretch of normal service in [minUp, maxUp).
	waves        int
	minUp, maxUp time.Duration
	// maxStall bounds a stall or a refusal (drawn from [maxStall/10, maxStall)).
	maxStall time.Duration
	// commitPattern is a byte string only the final round trip of a keyed write
	// carries (the stored response in the record's upsert, pipelined with COMMIT).
	commitPattern []byte
	// done counts the outages run, by kind (for the log).
	done map[string]int
}

// run releases w's keys in f.waves waves and ends each with an outage, restoring the
// proxy before the next. It returns when every key is released or ctx ends.
//
// Each wave keeps a few of its keys for its outage and releases them while the
// outage lasts (just before it, for a cut or a reset, which are instantaneous), so
// that every outage meets writes under way: an outage that starts after its wave's
// writes finished tests nothing, and at half scale (E2E_SCALE=0.5) a run whose five
// outages all fell between writes met none.
func (f *storeFaults) run(t *testing.T, ctx context.Context, rng *rand.Rand, w *e2e.WriteTest, keys int) {
	t.Helper()
	f.done = map[string]int{}
	for wave := 0; wave < f.waves && ctx.Err() == nil; wave++ {
		share := (keys - w.Issued() + (f.waves - wave - 1)) / (f.waves - wave)
		during := min(4, (share+1)/2)
		n := share - during
		up := f.minUp + time.Duration(rng.Int64N(int64(f.maxUp-f.minUp)))
		for range n {
			w.Issue(1)
			if sleepCtx(ctx, up/time.Duration(max(1, n))) != nil {
				return
			}
		}
		outage := f.maxStall/10 + time.Duration(rng.Int64N(int64(f.maxStall*9/10)))
		// release spreads the wave's kept keys over d, from now.
		release := func(d time.Duration) {
			for range during {
				w.Issue(1)
				sleepCtx(ctx, d/time.Duration(during))
			}
			if during == 0 {
				sleepCtx(ctx, d)
			}
		}
		switch kind := []string{"stall", "cut", "reset", "refuse", "lost-commit"}[rng.IntN(5)]; kind {
		case "stall": // a frozen server: nothing moves, then everything held moves at once
			f.px.Stall()
			release(outage)
			f.done[kind]++
		case "cut": // the backends die, under the writes just released
			release(20 * time.Millisecond)
			f.px.Cut()
			f.done[kind]++
		case "reset":
			release(20 * time.Millisecond)
			f.px.Reset()
			f.done[kind]++
		case "refuse": // the server is down for a while
			f.px.Refuse(true)
			f.px.Reset()
			release(outage)
			f.done[kind]++
		case "lost-commit": // COMMITs go through, their answers do not come back
			f.px.CutAfter(f.commitPattern)
			// A COMMIT can lose its answer only if writes are under way.
			release(outage / 4)
			f.done[kind]++
		}
		f.px.Restore()
	}
	w.Issue(keys)
}

// completeState is how the record's state travels in its upsert, the final round
// trip of a keyed write (pipelined with COMMIT): a parameter of exactly the 8 bytes
// "complete", after its length. Nothing earlier in the write carries it. (A risk's
// JSON, which the pattern used to be, goes out first with its event, so an outage
// armed between two writes cut every write at its event, before its COMMIT.)
var completeState = []byte("\x00\x00\x00\x08complete")

// TestStoreFaultKeyedWrites is issue 13's store-fault test: one riskapi process whose
// PostgreSQL is made unreachable again and again under keyed load — connections
// stalled, cut, reset and refused, COMMIT answers lost — through a proxy, then
// restored. No write doubled or lost; every non-2xx a 503 or 409 with Retry-After;
// every 503 names its outcome, and a key whose write committed without a 2xx
// saying so was answered "unknown" (or a network error), never only "not_executed".
func TestStoreFaultKeyedWrites(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("the store-fault proxy sits in front of PostgreSQL (TEST_DATABASE_URL=postgres://…); SQLite has no connection")
	}
	lease := 5 * time.Second
	direct := dbtest.URL(t)
	creds := e2e.ProvisionT(t, direct, t.Name())
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	px := netfault.StartT(t, u.Host)
	u.Host = px.Addr()
	in := e2e.StartT(t, e2e.Config{DatabaseURL: u.String(), Name: "api", Lease: lease})
	faults := &storeFaults{px: px, waves: scaled(10), minUp: 100 * time.Millisecond, maxUp: 400 * time.Millisecond,
		maxStall: lease * 3 / 4, commitPattern: completeState}
	rep := writeScenario{keys: scaled(300), clients: 8, dup: 1, lease: lease, faults: faults}.run(t, direct, creds, []*e2e.Instance{in})
	t.Logf("outages: %v; connections cut at a COMMIT: %d", faults.done, px.PatternCuts())
	if rep.Unavailable == 0 {
		t.Errorf("no request met an outage: the test did not test anything (%s)", rep)
	}
	if faults.done["lost-commit"] > 0 && px.PatternCuts() > 0 && rep.Unknown == 0 {
		t.Errorf("%d COMMIT answers were lost, yet no 503 said outcome unknown (%s)", px.PatternCuts(), rep)
	}
}
