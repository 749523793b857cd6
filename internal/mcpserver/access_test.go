package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
)

// The key's scopes decide which tools it may call.
func TestScopesDecideTheTools(t *testing.T) {
	env := apitest.New(t)
	ten := env.Tenant("acme")
	base := server(t, env)
	full, read := connect(t, base, ten.Key), connect(t, base, ten.ReadKey)
	created := mustOK(t, full, "create_risk", map[string]any{"idempotencyKey": "scope-create", "risk": map[string]any{"title": "A"}})
	id := resultOf(t, created)["id"]

	mustOK(t, read, "list_risks", map[string]any{"status": "open", "limit": 10})
	mustOK(t, read, "get_risk", map[string]any{"id": id})
	mustOK(t, read, "get_heatmap", nil)
	mustFail(t, read, "create_risk", map[string]any{"idempotencyKey": "scope-denied", "risk": map[string]any{"title": "B"}}, "FORBIDDEN")
	mustFail(t, read, "delete_risk", map[string]any{"idempotencyKey": "scope-denied", "id": id}, "FORBIDDEN")
	mustFail(t, read, "search_audit_log", nil, "FORBIDDEN")
	mustFail(t, read, "list_events", nil, "FORBIDDEN")
	mustFail(t, read, "get_write_outcome", map[string]any{"idempotencyKey": "scope-create"}, "FORBIDDEN")

	audit := resultOf(t, mustOK(t, full, "search_audit_log", map[string]any{"action": "risk.created"}))
	if data, _ := audit["data"].([]any); len(data) != 1 {
		t.Fatalf("audit log: %v", audit)
	}
	events := resultOf(t, mustOK(t, full, "list_events", nil))
	if data, _ := events["data"].([]any); len(data) != 1 {
		t.Fatalf("events: %v", events)
	}
	if n := countRisks(t, env, ten.Key); n != 1 {
		t.Fatalf("%d risks, want 1", n)
	}
}

// Another tenant's key sees none of this tenant's risks or records, whatever the key
// string, and cannot ride on its session.
func TestTenantsAreIsolated(t *testing.T) {
	env := apitest.New(t)
	a, b := env.Tenant("acme"), env.Tenant("globex")
	base := server(t, env)
	csA, csB := connect(t, base, a.Key), connect(t, base, b.Key)
	args := map[string]any{"idempotencyKey": "shared-key-1", "risk": map[string]any{"title": "Same"}}
	ra := mustOK(t, csA, "create_risk", args)
	rb := mustOK(t, csB, "create_risk", args)
	if rb["replayed"] != false || resultOf(t, rb)["id"] == resultOf(t, ra)["id"] {
		t.Fatalf("tenant B's call with A's key string: %v", rb)
	}
	mustFail(t, csB, "get_risk", map[string]any{"id": resultOf(t, ra)["id"]}, "NOT_FOUND")
	list := resultOf(t, mustOK(t, csB, "list_risks", nil))
	if data, _ := list["data"].([]any); len(data) != 1 {
		t.Fatalf("B lists %v", list)
	}
	if out := mustOK(t, csB, "get_write_outcome", map[string]any{"idempotencyKey": "only-a-key"}); out["outcome"] != "not_found" {
		t.Fatalf("%v", out)
	}
	mustOK(t, csA, "create_risk", map[string]any{"idempotencyKey": "only-a-key", "risk": map[string]any{"title": "A only"}})
	if out := mustOK(t, csB, "get_write_outcome", map[string]any{"idempotencyKey": "only-a-key"}); out["outcome"] != "not_found" {
		t.Fatalf("B sees A's record: %v", out)
	}

	// A's session id with B's key: refused, nothing listed.
	body := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"list_risks","arguments":{}}}`
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+b.Key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", csA.ID())
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var refusal map[string]any
	json.NewDecoder(resp.Body).Decode(&refusal)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") ||
		refusal["code"] != "FORBIDDEN" || refusal["status"] != float64(http.StatusForbidden) {
		t.Fatalf("another key on A's session: %d %s %v, want a 403 FORBIDDEN problem", resp.StatusCode, resp.Header.Get("Content-Type"), refusal)
	}
	// No key at all: 401 before any MCP message is read.
	req, _ = http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("no key: %d", resp.StatusCode)
	}
}
