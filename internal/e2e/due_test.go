package e2e_test

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/e2e"
)

var dueItems = flag.Int("due.items", 1500, "TestDueNoticesExactlyOnceUnderCrashes: risks of each due kind (review due soon, review overdue), times -e2e.scale")

// TestDueNoticesExactlyOnceUnderCrashes: two instances on one PostgreSQL, each
// running the due-date finder every second (SCHEDULE_SPEC=@every 1s), over
// hundreds of risks whose reviews are due or overdue, while one or the other is
// SIGKILLed and restarted every few hundred milliseconds — mid-run, since a run
// takes longer than that. Once they have settled, every (kind, risk, date) has
// exactly one event and one notice: none missing, none doubled.
//
//	TEST_DATABASE_URL=postgres://… go test -count=1 -run TestDueNoticesExactlyOnceUnderCrashes -v ./internal/e2e/ -due.items=2000
func TestDueNoticesExactlyOnceUnderCrashes(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("several instances share one PostgreSQL; SQLite is one process's store")
	}
	url := dbtest.URL(t)
	creds := e2e.ProvisionT(t, url, t.Name())
	ctx := context.Background()
	db, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	today := time.Now().UTC()
	soon, late := today.AddDate(0, 0, 3).Format("2006-01-02"), today.AddDate(0, 0, -3).Format("2006-01-02")
	n := scaled(*dueItems)
	// Half due soon (risk.review_due), half overdue (risk.review_overdue).
	err = db.Exec(`INSERT INTO risks (id, tenant_id, title, description, category, status, owner, version, metadata,
		review_date, created_at, updated_at)
		SELECT 'risk_' || lpad(to_hex(g), 32, '0'), ?, 'due ' || g, '', '', 'open', '', 1, '{}',
			CASE WHEN g % 2 = 0 THEN ? ELSE ? END, now(), now()
		FROM generate_series(1, ?) g`, creds.TenantID, soon, late, 2*n).Error
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"SCHEDULE_SPEC=@every 1s"}
	a := e2e.StartT(t, e2e.Config{DatabaseURL: url, Name: "a", Env: env})
	b := e2e.StartT(t, e2e.Config{DatabaseURL: url, Name: "b", Env: env})
	count := func() (events, notices, doubled int64) {
		t.Helper()
		if err := db.Raw(`SELECT count(*) FROM events WHERE tenant_id = ? AND type IN ('risk.review_due', 'risk.review_overdue')`,
			creds.TenantID).Scan(&events).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Raw(`SELECT count(*) FROM due_notices WHERE tenant_id = ?`, creds.TenantID).Scan(&notices).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Raw(`SELECT count(*) FROM (SELECT type, payload::json->'data'->'object'->>'id' AS object,
			payload::json->'data'->'object'->>'reviewDate' AS due
			FROM events WHERE tenant_id = ? GROUP BY 1, 2, 3 HAVING count(*) > 1) d`, creds.TenantID).Scan(&doubled).Error; err != nil {
			t.Fatal(err)
		}
		return
	}
	// Kill one or the other, mid-run, for a while.
	kills := 0
	deadline := time.Now().Add(8 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		time.Sleep(time.Duration(300+100*(i%5)) * time.Millisecond)
		victim := []*e2e.Instance{a, b}[i%2]
		if err := victim.Kill(); err != nil {
			t.Fatal(err)
		}
		kills++
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := victim.Restart(rctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	events, notices, doubled := count()
	t.Logf("after %d kills: %d events, %d notices", kills, events, notices)
	// Then let them finish: every item noticed, once.
	want := int64(2 * n)
	settle := time.Now().Add(2 * time.Minute)
	for events < want && time.Now().Before(settle) {
		time.Sleep(500 * time.Millisecond)
		events, notices, doubled = count()
	}
	time.Sleep(2 * time.Second) // two more runs of each instance: they must add nothing
	events, notices, doubled = count()
	if events != want || notices != want || doubled != 0 {
		t.Errorf("%d events, %d notices, %d doubled (kind, risk, date); want %d, %d, 0", events, notices, doubled, want, want)
	}
	var orphan int64
	if err := db.Raw(`SELECT count(*) FROM events e WHERE e.tenant_id = ? AND e.type LIKE 'risk.review_%'
		AND NOT EXISTS (SELECT 1 FROM due_notices n WHERE n.id = e.id)`, creds.TenantID).Scan(&orphan).Error; err != nil {
		t.Fatal(err)
	}
	if orphan != 0 {
		t.Errorf("%d events without their notice: the claim and the event did not commit together", orphan)
	}
	t.Logf("due notices: %d items, %d kills of two instances, each noticed once", want, kills)
}
