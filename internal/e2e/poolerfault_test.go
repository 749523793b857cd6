package e2e_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/e2e"
	"github.com/riskapi/riskapi/internal/events/webhooktest"
)

// envPoolerStops sets the PostgreSQL immediate stops of TestPoolerFaults (default
// scaled(10)); PgBouncer is killed besides, once for every two and a half stops.
const envPoolerStops = "E2E_POOLER_STOPS"

// poolerStallBound is how soon after PostgreSQL (or PgBouncer) accepts connections
// again writes through the pooler succeed, with e2e.PgBouncerSettings
// (docs/deploying.md, After PostgreSQL restarts).
const poolerStallBound = 5 * time.Second

// TestPoolerFaults is issue 37's fault run through a transaction pooler (contract
// §16; docs/deploying.md): a riskapi instance with DATABASE_POOLER=transaction on a
// PgBouncer (e2e.PgBouncerSettings) in front of a private PostgreSQL cluster, 6
// clients sending unkeyed writes with unique titles (resending after 503
// not_executed, as docs/errors.md allows) and 4 sending keyed ones (retrying the
// same key), while PostgreSQL is stopped with `pg_ctl stop -m immediate` behind the
// pooler and PgBouncer is SIGKILLed, each with writes in flight. PgBouncer reports
// a server connection that died under a COMMIT as its own error ("server conn
// crashed?", 08P01), which riskapi once answered not_executed. Every send answered
// not_executed is checked against the database: no unkeyed send's marker and no
// keyed write's creation time may belong to one; no title may have two risks; the
// keyed writes pass WriteTest's checks (exactly once, none lost). After each fault,
// the time from PostgreSQL (or PgBouncer) accepting connections again to the first
// write answered 201 must stay within poolerStallBound. The keyed writes' events
// reach a webhook endpoint: each risk has one event, and the run logs how many
// deliveries were repeated (at-least-once, docs/events.md).
func TestPoolerFaults(t *testing.T) {
	stops := scaled(10)
	if s := os.Getenv(envPoolerStops); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", envPoolerStops, s)
		}
		stops = n
	}
	kills := max(1, stops*2/5)
	pg := e2e.StartPGClusterT(t)
	pgb := e2e.StartPgBouncerT(t, pg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(stops+kills)*30*time.Second+3*time.Minute)
	defer cancel()
	if _, err := e2e.CLI(ctx, e2e.Binary(t), pgb.URL(), t.TempDir(), "migrate"); err != nil {
		t.Fatal(err)
	}
	creds := e2e.ProvisionT(t, pgb.URL(), t.Name())
	const lease = 5 * time.Second
	rcv := webhooktest.NewReceiver(t)
	in := e2e.StartT(t, e2e.Config{DatabaseURL: pgb.URL(), Name: "api", Lease: lease, Env: []string{"WEBHOOK_ALLOW_PRIVATE=true"}})
	// The keyed writes have a tenant of their own (WriteTest counts its risks), whose
	// endpoint receives their events: delivery repeats after the faults are counted.
	et := provisionEvents(t, pgb.URL(), in.URL(), rcv.URL())
	keyedCreds := et.creds
	rng := newRand(t)
	client := e2e.NewClient(creds.APIKey, 16)
	defer client.Close()
	prefix := fmt.Sprintf("pgbfault-%d", rng.Uint32())
	var mu sync.Mutex
	var created []time.Time // arrival of every unkeyed 201
	load := &unkeyedLoad{client: client, target: in.URL, prefix: prefix + "-u", created: func(at time.Time) {
		mu.Lock()
		created = append(created, at)
		mu.Unlock()
	}}
	const keysPerFault = 40
	keyedClient := e2e.NewClient(keyedCreds.APIKey, 8)
	defer keyedClient.Close()
	w := e2e.NewWriteTest(e2e.WriteTestConfig{Client: keyedClient, Targets: func() []string { return []string{in.URL()} },
		Keys: keysPerFault * (stops + kills), Clients: 4, Prefix: prefix + "-k", Lease: lease})
	loadCtx, endLoad := context.WithTimeout(ctx, time.Duration(stops+kills)*30*time.Second)
	defer endLoad()
	load.start(loadCtx, 6)
	w.Start(loadCtx)
	firstCreatedAfter := func(back time.Time) (time.Duration, bool) {
		mu.Lock()
		defer mu.Unlock()
		for _, at := range created {
			if at.After(back) {
				return at.Sub(back), true
			}
		}
		return 0, false
	}
	stalls := map[string][]time.Duration{}
	faults := slices.Repeat([]string{"postgres"}, stops)
	for i := range kills { // spread among the stops
		faults = slices.Insert(faults, min(len(faults), (i+1)*(stops+kills)/(kills+1)), "pgbouncer")
	}
	for round, fault := range faults {
		w.Issue(keysPerFault / 2)
		sleepCtx(ctx, time.Duration(300+rng.IntN(500))*time.Millisecond)
		for load.inFlight.Load() == 0 && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		inFlight := load.inFlight.Load()
		outage := time.Duration(100+rng.IntN(400)) * time.Millisecond
		switch fault {
		case "postgres":
			if err := pg.StopImmediate(ctx); err != nil {
				t.Fatalf("round %d: %v", round+1, err)
			}
			w.Issue(keysPerFault / 4) // writes meet the outage
			sleepCtx(ctx, outage)
			if err := pg.Start(ctx); err != nil {
				t.Fatalf("round %d: %v\n%s", round+1, err, pg.LogTail(4096))
			}
		case "pgbouncer":
			pgb.Kill()
			w.Issue(keysPerFault / 4)
			sleepCtx(ctx, outage)
			if err := pgb.Start(ctx); err != nil {
				t.Fatalf("round %d: %v", round+1, err)
			}
		}
		back := time.Now() // pg_ctl start -w and PgBouncer's Start return once connections are accepted
		var stall time.Duration
		for {
			d, ok := firstCreatedAfter(back)
			if ok {
				stall = d
				break
			}
			if time.Since(back) > 60*time.Second || ctx.Err() != nil {
				t.Fatalf("round %d (%s): no write succeeded within a minute of the restart\n--- PgBouncer log:\n%s\n--- api log:\n%s",
					round+1, fault, pgb.LogTail(4096), in.LogTail(8<<10))
			}
			time.Sleep(5 * time.Millisecond)
		}
		stalls[fault] = append(stalls[fault], stall)
		w.Issue(keysPerFault - keysPerFault/2 - keysPerFault/4)
		t.Logf("round %d: %s down for %s with %d unkeyed writes in flight; first write answered 201 %s after it accepted connections again",
			round+1, fault, outage, inFlight, stall.Round(time.Millisecond))
		if stall > poolerStallBound {
			t.Errorf("round %d: writes succeeded %s after %s accepted connections again, want within %s",
				round+1, stall.Round(time.Millisecond), fault, poolerStallBound)
		}
	}
	load.stopped.Store(true)
	load.wg.Wait()
	w.Finish()
	endLoad()
	w.Verify(ctx)
	rep := w.Check(ctx, in.URL())
	t.Logf("keyed: %s", rep)
	for _, p := range append(rep.Problems, rep.Losses...) {
		t.Error(p)
	}
	unkeyedNotExecuted := checkUnkeyedTitles(t, ctx, pg.URL(), creds.TenantID, stops+kills, load.titles)
	untrue := w.UntrueNotExecuted(keyedCreation(t, ctx, pg.URL(), keyedCreds.TenantID))
	for _, u := range untrue {
		t.Error(u)
	}
	t.Logf("%d PostgreSQL immediate stops and %d PgBouncer kills behind one instance: not_executed answers %d unkeyed, %d keyed, "+
		"of which untrue (committed) %d keyed; unknown %d keyed", stops, kills, unkeyedNotExecuted, rep.NotExecuted, len(untrue), rep.Unknown)
	for fault, d := range stalls {
		t.Logf("from %s accepting connections again to the first write answered 201: max %s, all %v", fault,
			slices.Max(d).Round(time.Millisecond), roundAll(d))
	}
	keyedRisks, err := keyedClient.ListRisks(ctx, in.URL(), 100)
	if err != nil {
		t.Fatal(err)
	}
	events := et.listEvents(t, in.URL())
	perRisk := map[string]int{}
	for _, riskID := range events {
		perRisk[riskID]++
	}
	for _, r := range keyedRisks {
		if perRisk[r.ID] != 1 {
			t.Errorf("risk %s has %d risk.created events, want 1", r.ID, perRisk[r.ID])
		}
	}
	ids := rcv.WaitIDs(t, len(events), 90*time.Second)
	repeats := 0
	for id, c := range ids {
		if _, ok := events[id]; !ok {
			t.Errorf("delivered webhook-id %s is no committed event", id)
		}
		repeats += c - 1
	}
	t.Logf("events of the keyed writes: %d risks, %d events, %d deliveries: %d events delivered more than once (%d repeats)",
		len(keyedRisks), len(events), len(rcv.Deliveries()), countOver(ids, 1), repeats)
	if unkeyedNotExecuted+int(rep.NotExecuted) == 0 {
		t.Errorf("no write was answered not_executed: no fault met a write, the test tested nothing")
	}
	if t.Failed() {
		t.Logf("--- PostgreSQL log tail:\n%s\n--- PgBouncer log tail:\n%s\n--- api log tail:\n%s",
			pg.LogTail(4096), pgb.LogTail(4096), in.LogTail(8<<10))
	}
}

// keyedCreation reads, directly from the database at url, when each risk of the
// tenant was created (the server's clock), by title.
func keyedCreation(t *testing.T, ctx context.Context, url, tenant string) map[string]time.Time {
	t.Helper()
	db, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows []struct {
		Title     string
		CreatedAt time.Time
	}
	if err := db.WithContext(ctx).Raw(`SELECT title, created_at FROM risks WHERE tenant_id = ?`, tenant).
		Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	at := map[string]time.Time{}
	for _, r := range rows {
		at[r.Title] = r.CreatedAt
	}
	return at
}

// roundAll rounds each duration to the millisecond.
func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}
