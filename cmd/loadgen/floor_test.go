package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/riskapi/riskapi/internal/dbtest"
)

// TestFloorScripts runs every script of a floor round against a migrated database
// and checks that the one-call design writes what riskapi's keyed write writes, that
// concurrent calls with one key create one risk, and that the function is dropped
// after. PostgreSQL only, with psql and pgbench on PATH.
func TestFloorScripts(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("the pgbench floor is PostgreSQL's (TEST_DATABASE_URL=postgres://…)")
	}
	for _, bin := range []string{"psql", "pgbench"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not on PATH", bin)
		}
	}
	ctx := context.Background()
	url := dbtest.DirectURL(t)
	f := &floor{dir: "../../bench/pgbench", url: url, clients: 2, slice: time.Second, log: io.Discard, tps: map[string][]float64{}}
	if err := f.setUp(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.round(ctx); err != nil {
		t.Fatal(err)
	}
	for _, s := range floorScripts {
		if f.mean(s) <= 0 {
			t.Errorf("%s.sql: %v tps", s, f.tps[s])
		}
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(q string) (n int) {
		t.Helper()
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	// Each first execution of either design leaves a risk, a record, an audit entry and an event.
	for _, d := range []struct{ title, key string }{{"pgb k %", "pgb-%"}, {"pgb 1 %", "pgb1-%"}} {
		risks := count(fmt.Sprintf(`SELECT count(*) FROM risks WHERE title LIKE '%s'`, d.title))
		recs := count(fmt.Sprintf(`SELECT count(*) FROM idempotency_records WHERE idem_key LIKE '%s' AND state = 'complete'`, d.key))
		if risks == 0 || risks != recs {
			t.Errorf("%s: %d risks for %d complete records", d.title, risks, recs)
		}
	}
	if a, e := count(`SELECT count(*) FROM audit_log WHERE tenant_id = 'ten_pgbench'`), count(`SELECT count(*) FROM events WHERE tenant_id = 'ten_pgbench'`); a == 0 || a != e {
		t.Errorf("%d audit entries for %d events", a, e)
	}
	// riskapi's scripts carry the risk's INSERT in the statement of its audit entry
	// and event: each entry names a risk the same statement wrote.
	if n := count(`SELECT count(*) FROM audit_log a WHERE a.tenant_id = 'ten_pgbench'
		AND NOT EXISTS (SELECT 1 FROM risks r WHERE r.id = a.target_id)`); n != 0 {
		t.Errorf("%d audit entries name no risk", n)
	}

	// 8 concurrent calls with one key and one body: one creates, the others are told
	// the key is busy or replay the stored answer; one risk in all.
	const width = 8
	outcomes := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range width {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var out string
			err := db.QueryRowContext(ctx, `SELECT outcome FROM pgbench_keyed_write(7, 'ten_pgbench', 'race', 'fp',
				$1, 'race title', 'd', 'key_pgbench', $2, 'c', 'r', '127.0.0.1', 'ua', $3, 'p', 'b'::bytea, 'h')`,
				fmt.Sprintf("risk_race%d", i), fmt.Sprintf("aud_race%d", i), fmt.Sprintf("evt_race%d", i)).Scan(&out)
			if err != nil {
				out = err.Error()
			}
			mu.Lock()
			outcomes[out]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	if outcomes["created"] != 1 || outcomes["created"]+outcomes["busy"]+outcomes["replay"] != width {
		t.Errorf("outcomes of %d concurrent calls with one key: %v", width, outcomes)
	}
	if n := count(`SELECT count(*) FROM risks WHERE title = 'race title'`); n != 1 {
		t.Errorf("%d risks for one key", n)
	}
	var out string
	if err := db.QueryRow(`SELECT outcome FROM pgbench_keyed_write(7, 'ten_pgbench', 'race', 'another',
		'risk_x', 't', 'd', 'key_pgbench', 'aud_x', 'c', 'r', 'ip', 'ua', 'evt_x', 'p', 'b'::bytea, 'h')`).Scan(&out); err != nil || out != "mismatch" {
		t.Errorf("the key with another fingerprint: %q, %v; want mismatch", out, err)
	}

	if err := f.tearDown(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(`SELECT count(*) FROM pg_proc WHERE proname = 'pgbench_keyed_write'`); n != 0 {
		t.Errorf("teardown.sql left the function (%d)", n)
	}
}

func TestRaceTitle(t *testing.T) {
	g := &generator{run_: "lg-1234"}
	b := g.body("race3")
	if got, want := raceTitle(b), "lg-1234 race3 1"; got != want {
		t.Errorf("raceTitle(%s) = %q, want %q", b, got, want)
	}
}
