package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/dbtest"
)

// TestKeyedCommitHasTheCallDeadline: the pipeline that stores a keyed write's record
// and commits it passes GORM, yet it is a store call like every other: when it cannot
// finish (its record's row is locked by another session) the request is answered
// 503 STORE_UNAVAILABLE after the call deadline (half the lease), not at the
// handler's (4/5 of it). PostgreSQL only: SQLite's reservation goes through GORM.
func TestKeyedCommitHasTheCallDeadline(t *testing.T) {
	t.Parallel()
	if !dbtest.Postgres() {
		t.Skip("the pipelined reservation is PostgreSQL's (TEST_DATABASE_URL=postgres://…)")
	}
	const lease = 10 * time.Second // call deadline 5 s, handler's 8 s
	env := apitest.New(t, func(c *config.Config) { c.Idempotency.Lease = lease })
	a := env.Tenant("Acme")
	req := apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Header: key("call-deadline-1"),
		JSON: map[string]any{"likelihood": 9}}
	apitest.Do(t, env, req).Expect(400) // a FAILED record: its row exists

	// Another session holds the record's row, so the record's upsert waits.
	tx := env.App.DB.WithContext(context.Background()).Begin()
	defer tx.Rollback()
	if err := tx.Exec(`SELECT 1 FROM idempotency_records WHERE idem_key = ? FOR UPDATE`, "call-deadline-1").Error; err != nil {
		t.Fatal(err)
	}
	req.JSON = map[string]any{"title": "t"}
	start := time.Now()
	res := apitest.Do(t, env, req)
	took := time.Since(start)
	checkUnavailable(t, res, "unknown") // the COMMIT was in the pipeline
	if took >= lease*4/5 {
		t.Errorf("answered after %s: the handler's deadline (%s), not the call's (%s)", took.Round(time.Millisecond), lease*4/5, lease/2)
	}
	tx.Rollback()
	eventually(t, env, req).Expect(201)
}
