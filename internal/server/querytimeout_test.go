package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/dbtest"
)

// A read held past QUERY_TIMEOUT is answered 503 QUERY_TIMEOUT with Retry-After,
// long before the store bound (half the lease). PostgreSQL: a lock holds the read (SQLite's readers never wait for a lock;
// its interruption is shown in internal/database).
func TestReadPastQueryTimeoutIs503QueryTimeout(t *testing.T) {
	t.Parallel()
	if !dbtest.Postgres() {
		t.Skip("a lock holds the read on PostgreSQL (TEST_DATABASE_URL=postgres://…)")
	}
	env := apitest.New(t, func(c *config.Config) { c.Database.QueryTimeout = 300 * time.Millisecond })
	a := env.Tenant("Acme")
	apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "t"}}).Expect(201)

	tx := env.App.DB.WithContext(context.Background()).Begin()
	defer tx.Rollback()
	if err := tx.Exec(`LOCK TABLE risks IN ACCESS EXCLUSIVE MODE`).Error; err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res := apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks?q=zq", Bearer: a.Key}).
		ExpectProblem(503, "QUERY_TIMEOUT")
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("answered after %v", took)
	}
	if res.Header().Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	tx.Rollback()
	apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks?q=zq", Bearer: a.Key}).Expect(200)
}
