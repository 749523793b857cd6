package mcpserver_test

import (
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
)

// The record store refusing a write's COMPLETE record: the tool error is the route's
// 503 STORE_UNAVAILABLE with its outcome and retryAfter, nothing was kept, and the
// retry with the same key runs the write once.
func TestStoreFailureCarriesOutcome(t *testing.T) {
	env := apitest.New(t)
	ten := env.Tenant("acme")
	cs := connect(t, server(t, env), ten.Key)
	args := map[string]any{"idempotencyKey": "store-fails-1", "risk": map[string]any{"title": "Rolled back"}}
	undo := apitest.FailCompleting(t, env.App.DB, "store-fails-1")
	out := mustFail(t, cs, "create_risk", args, "STORE_UNAVAILABLE")
	undo()
	if out["outcome"] != "not_executed" || out["retryAfter"] == nil || out["status"] != float64(503) {
		t.Fatalf("store failure: %v, want outcome not_executed and retryAfter", out)
	}
	if n := countRisks(t, env, ten.Key); n != 0 {
		t.Fatalf("%d risks after a rolled-back write, want 0", n)
	}
	if o := mustOK(t, cs, "get_write_outcome", map[string]any{"idempotencyKey": "store-fails-1"}); o["outcome"] == "completed" {
		t.Fatalf("a rolled-back write looks completed: %v", o)
	}
	retry := mustOK(t, cs, "create_risk", args)
	if retry["replayed"] != false || countRisks(t, env, ten.Key) != 1 {
		t.Fatalf("retry: %v", retry)
	}
}
