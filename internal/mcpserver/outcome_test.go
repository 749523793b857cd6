package mcpserver_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/apiversion"
	"github.com/riskapi/riskapi/internal/database"
)

// holdRiskWrites blocks every write to risks until release: a keyed write started
// meanwhile holds its key, in flight.
func holdRiskWrites(t *testing.T, env *apitest.Env) (release func()) {
	t.Helper()
	ctx := context.Background()
	sqlDB, err := env.App.DB.DB.DB()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{"BEGIN IMMEDIATE"}
	if env.App.DB.Dialect == database.Postgres {
		stmts = []string{"BEGIN", "LOCK TABLE risks IN EXCLUSIVE MODE"}
	}
	for _, s := range stmts {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	var once bool
	release = func() {
		if !once {
			once = true
			conn.ExecContext(ctx, "ROLLBACK")
			conn.Close()
		}
	}
	t.Cleanup(release)
	return release
}

func TestKeyInFlightThenCompleted(t *testing.T) {
	env := apitest.New(t)
	ten := env.Tenant("acme")
	cs := connect(t, server(t, env), ten.Key)
	key := "inflight-key-1"
	if out := mustOK(t, cs, "get_write_outcome", map[string]any{"idempotencyKey": key}); out["outcome"] != "not_found" {
		t.Fatalf("before any call: %v", out)
	}

	release := holdRiskWrites(t, env)
	done := make(chan *apitest.Response, 1)
	go func() {
		done <- env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: ten.Key,
			Header: http.Header{"Idempotency-Key": {key}, apiversion.Header: {string(apiversion.API.Newest())}}, Body: `{"title":"Held"}`})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := mustOK(t, cs, "get_write_outcome", map[string]any{"idempotencyKey": key})
		if out["outcome"] == "in_flight" {
			if out["retryAfter"] == nil || out["path"] != "/v2/risks" {
				t.Fatalf("in flight without retryAfter or path: %v", out)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the held write never showed in flight: %v", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Same key, any arguments, while it runs: IDEMPOTENCY_KEY_IN_USE with retryAfter.
	busy := mustFail(t, cs, "create_risk", map[string]any{"idempotencyKey": key, "risk": map[string]any{"title": "Held"}}, "IDEMPOTENCY_KEY_IN_USE")
	if n, ok := busy["retryAfter"].(float64); !ok || n < 1 {
		t.Fatalf("in use without retryAfter: %v", busy)
	}

	release()
	first := (<-done).Expect(http.StatusCreated).Map()
	out := mustOK(t, cs, "get_write_outcome", map[string]any{"idempotencyKey": key})
	if out["outcome"] != "completed" || out["statusCode"] != float64(201) || resultOf(t, out)["id"] != first["id"] {
		t.Fatalf("after it ran: %v, want completed with risk %v", out, first["id"])
	}
	again := mustOK(t, cs, "create_risk", map[string]any{"idempotencyKey": key, "risk": map[string]any{"title": "Held"}})
	if again["replayed"] != true || resultOf(t, again)["id"] != first["id"] {
		t.Fatalf("retry after it ran: %v", again)
	}
	if n := countRisks(t, env, ten.Key); n != 1 {
		t.Fatalf("%d risks, want 1", n)
	}
}

// A write that was refused leaves a failed record: the outcome says so, and a retry
// with the key runs again. An update is found by its risk's id.
func TestOutcomeOfFailedAndCompletedUpdates(t *testing.T) {
	env := apitest.New(t)
	ten := env.Tenant("acme")
	cs := connect(t, server(t, env), ten.Key)
	created := mustOK(t, cs, "create_risk", map[string]any{"idempotencyKey": "outcome-create", "risk": map[string]any{"title": "Vendor"}})
	id := resultOf(t, created)["id"].(string)

	mustFail(t, cs, "update_risk", map[string]any{"idempotencyKey": "outcome-update", "id": id, "ifMatch": `"7"`,
		"risk": map[string]any{"title": "Vendor, renamed"}}, "PRECONDITION_FAILED")
	if out := mustOK(t, cs, "get_write_outcome", map[string]any{"idempotencyKey": "outcome-update"}); out["outcome"] != "not_found" {
		t.Fatalf("an update looked up without its risk: %v, want not_found", out)
	}
	out := mustOK(t, cs, "get_write_outcome", map[string]any{"idempotencyKey": "outcome-update", "riskId": id})
	if out["outcome"] != "failed" || out["method"] != "PATCH" {
		t.Fatalf("after a 412: %v, want failed", out)
	}
	upd := mustOK(t, cs, "update_risk", map[string]any{"idempotencyKey": "outcome-update", "id": id, "ifMatch": created["etag"],
		"risk": map[string]any{"title": "Vendor, renamed"}})
	if upd["replayed"] != false {
		t.Fatalf("retry of a failed write was replayed: %v", upd)
	}
	out = mustOK(t, cs, "get_write_outcome", map[string]any{"idempotencyKey": "outcome-update", "riskId": id})
	if out["outcome"] != "completed" || resultOf(t, out)["title"] != "Vendor, renamed" {
		t.Fatalf("after the update: %v", out)
	}
	// A delete, retried: the retry answers the deletion, not NOT_FOUND.
	del := map[string]any{"idempotencyKey": "outcome-delete", "id": id}
	if out := mustOK(t, cs, "delete_risk", del); out["replayed"] != false || out["status"] != float64(204) {
		t.Fatalf("delete: %v", out)
	}
	if out := mustOK(t, cs, "delete_risk", del); out["replayed"] != true {
		t.Fatalf("retried delete: %v", out)
	}
	mustFail(t, cs, "get_risk", map[string]any{"id": id}, "NOT_FOUND")
}
