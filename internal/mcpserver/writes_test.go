package mcpserver_test

import (
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
)

func TestTwoCallsWithOneKeyMakeOneRisk(t *testing.T) {
	env := apitest.New(t)
	ten := env.Tenant("acme")
	cs := connect(t, server(t, env), ten.Key)
	args := map[string]any{"idempotencyKey": "create-0001", "risk": map[string]any{"title": "Vendor lacks a DPA", "likelihood": 3, "impact": 4}}
	first := mustOK(t, cs, "create_risk", args)
	second := mustOK(t, cs, "create_risk", args)
	if first["replayed"] != false || second["replayed"] != true {
		t.Fatalf("replayed = %v then %v, want false then true", first["replayed"], second["replayed"])
	}
	a, b := resultOf(t, first), resultOf(t, second)
	if a["id"] != b["id"] || a["riskScore"] != float64(12) {
		t.Fatalf("first %v, second %v: want one risk scored 12", a, b)
	}
	if n := countRisks(t, env, ten.Key); n != 1 {
		t.Fatalf("%d risks, want 1", n)
	}
	// The same key with other arguments is refused, and changes nothing.
	args["risk"] = map[string]any{"title": "Another"}
	mustFail(t, cs, "create_risk", args, "IDEMPOTENCY_KEY_REUSED")
	if n := countRisks(t, env, ten.Key); n != 1 {
		t.Fatalf("%d risks after a reused key, want 1", n)
	}
}

func TestWriteWithoutKeyIsRefused(t *testing.T) {
	env := apitest.New(t)
	ten := env.Tenant("acme")
	cs := connect(t, server(t, env), ten.Key)
	mustFail(t, cs, "create_risk", map[string]any{"risk": map[string]any{"title": "x"}}, "IDEMPOTENCY_KEY_REQUIRED")
	mustFail(t, cs, "create_risk", map[string]any{"idempotencyKey": "bad key!", "risk": map[string]any{"title": "x"}}, "IDEMPOTENCY_KEY_INVALID")
	if n := countRisks(t, env, ten.Key); n != 0 {
		t.Fatalf("%d risks, want 0", n)
	}
	_ = http.MethodGet
}
