package sandboxhttp_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/sandbox/sandboxstore"
)

// TestEraseSandboxData: DELETE /v1/sandbox/data erases the sandbox's data and
// nothing else — live data, the test key and the sandbox's endpoint stay, and the
// sandbox works on at once. Members may not erase.
func TestEraseSandboxData(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *config.Config) { c.Outbound.AllowPrivate = true })
	a := env.Tenant("Acme")
	session := apitest.Login(t, env, a).Token
	testKey := env.TestKey(a)
	inTest := http.Header{"Riskapi-Mode": {"test"}}
	liveRisk := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key,
		JSON: map[string]any{"title": "live"}}).Expect(http.StatusCreated).Map()["id"].(string)
	for _, title := range []string{"one", "two"} {
		env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: testKey,
			Header: http.Header{"Idempotency-Key": {"erase-" + title}}, JSON: map[string]any{"title": title}}).
			Expect(http.StatusCreated)
	}
	endpoint := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints", Bearer: session,
		Header: inTest, JSON: map[string]any{"url": "http://127.0.0.1:9/test"}}).Expect(http.StatusCreated).Map()["id"].(string)

	member := env.User(a.ID, "member")
	env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v1/sandbox/data", Bearer: member.Token}).
		ExpectProblem(http.StatusForbidden, "FORBIDDEN")
	env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v1/sandbox/data", Bearer: session,
		Header: http.Header{"Idempotency-Key": {"erase-once"}}}).ExpectProblem(http.StatusUnprocessableEntity, "IDEMPOTENCY_UNSUPPORTED_ROUTE")

	out := env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v1/sandbox/data", Bearer: session}).
		Expect(http.StatusOK).Map()
	if out["risks"] != 2.0 || out["events"] != 2.0 || out["idempotencyKeys"] != 2.0 || out["livemode"] != false {
		t.Errorf("erased %v, want the sandbox's 2 risks, their 2 events and 2 keyed requests", out)
	}
	for _, list := range []string{"/v2/risks", "/v2/events", "/v2/audit-log"} {
		if n := len(env.Do(apitest.Request{Method: http.MethodGet, Path: list, Bearer: testKey}).
			Expect(http.StatusOK).Map()["data"].([]any)); n != 0 {
			t.Errorf("%s of the sandbox after erasing: %d entries", list, n)
		}
	}
	// Live data is untouched, the endpoint kept, and the sandbox takes the same
	// idempotency key again as a new request.
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + liveRisk, Bearer: a.Key}).Expect(http.StatusOK)
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/webhook-endpoints/" + endpoint + "/deliveries",
		Bearer: session, Header: inTest}).Expect(http.StatusOK)
	again := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: testKey,
		Header: http.Header{"Idempotency-Key": {"erase-one"}}, JSON: map[string]any{"title": "one again"}}).Expect(http.StatusCreated)
	if again.Header().Get("Idempotent-Replayed") == "true" || again.Map()["title"] != "one again" {
		t.Errorf("a key of the erased sandbox replayed: %v", again.Map())
	}
	// The erasure is in the live audit log, which outlives the sandbox's.
	var log struct{ Data []struct{ Action string } }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/audit-log?action=sandbox.data_deleted", Bearer: session}).
		Expect(http.StatusOK).Decode(&log)
	if len(log.Data) != 1 {
		t.Errorf("live audit log holds %d sandbox.data_deleted entries, want 1", len(log.Data))
	}
}

// TestEveryTenantTableIsErasedOrKept: each table with a tenant_id column is in
// sandboxstore.Erased or sandboxstore.Kept, so a new table of tenant data cannot be
// forgotten by the erasure.
func TestEveryTenantTableIsErasedOrKept(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	db := env.App.DB
	q := `SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) c WHERE m.type = 'table' AND c.name = 'tenant_id'`
	if db.Dialect == database.Postgres {
		q = `SELECT table_name FROM information_schema.columns WHERE column_name = 'tenant_id' AND table_schema = current_schema()`
	}
	var tables []string
	if err := db.DB.Raw(q).Scan(&tables).Error; err != nil {
		t.Fatal(err)
	}
	if len(tables) < 10 {
		t.Fatalf("found only %v", tables)
	}
	for _, table := range tables {
		if !slices.Contains(sandboxstore.Erased, table) && !slices.Contains(sandboxstore.Kept, table) {
			t.Errorf("table %s is keyed by tenant but neither erased nor kept: name it in sandboxstore", table)
		}
	}
}
