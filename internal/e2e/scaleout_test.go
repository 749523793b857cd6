package e2e_test

import (
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/dbtest"
)

// TestScaleOutExactlyOnce: three instances on one PostgreSQL database; every key is
// sent by three senders at once, each starting at a different instance and retrying
// through all of them. Exactly one execution per key: as many risks as keys, every
// 2xx answer of a key byte-identical, one of them executed and the rest replays.
func TestScaleOutExactlyOnce(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("several instances need PostgreSQL (TEST_DATABASE_URL=postgres://…); SQLite supports one process")
	}
	lease := 5 * time.Second
	url, creds, insts := startInstances(t, 3, lease)
	keys := scaled(300)
	rep := writeScenario{keys: keys, clients: 8, dup: 3, lease: lease}.run(t, url, creds, insts)
	if rep.Executed != int64(keys) || rep.FinalExecuted != 0 {
		t.Errorf("%d executions for %d keys (%d in the final retry), want exactly one per key", rep.Executed, keys, rep.FinalExecuted)
	}
	if rep.InProgress == 0 && rep.Replayed == int64(keys) {
		t.Logf("no concurrent duplicate met another in flight (every duplicate was a replay)")
	}
}

// TestFaultUnderLoad: three instances on PostgreSQL, each key sent by two senders at
// once to different instances, while instances are SIGKILLed at random and
// restarted (never all at once) and clients retry across instances. No doubled
// risk, no lost acknowledged write, no key blocked past the lease.
func TestFaultUnderLoad(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("several instances need PostgreSQL (TEST_DATABASE_URL=postgres://…); SQLite supports one process")
	}
	lease := 5 * time.Second
	url, creds, insts := startInstances(t, 3, lease)
	rep := writeScenario{keys: scaled(300), clients: 8, dup: 2, lease: lease,
		chaos: &chaos{kills: scaled(12), minUp: 50 * time.Millisecond, maxUp: 300 * time.Millisecond, newPortEvery: 5, burst: 8},
	}.run(t, url, creds, insts)
	if rep.NetErrors == 0 {
		t.Errorf("no request was cut by a kill: the test did not test anything (%s)", rep)
	}
}
