package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
)

// The tools an agent lists: their hints, and schemas read from docs/openapi.yaml.
func TestToolsCarryTheSpecsSchemasAndTruthfulHints(t *testing.T) {
	env := apitest.New(t)
	ten := env.Tenant("acme")
	cs := connect(t, server(t, env), ten.Key)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v < "2025-06-18" {
		t.Fatalf("protocol %s", v)
	}
	type hints struct{ readOnly, destructive bool }
	want := map[string]hints{
		"list_risks": {true, false}, "get_risk": {true, false}, "get_heatmap": {true, false}, "list_events": {true, false},
		"search_audit_log": {true, false}, "get_write_outcome": {true, false},
		"create_risk": {false, false}, "update_risk": {false, true}, "delete_risk": {false, true}, "import_risks": {false, true},
	}
	schemas := map[string]map[string]any{}
	for _, tool := range res.Tools {
		w, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		delete(want, tool.Name)
		a := tool.Annotations
		if a == nil || a.ReadOnlyHint != w.readOnly || a.DestructiveHint == nil || *a.DestructiveHint != w.destructive || !a.IdempotentHint {
			t.Errorf("%s: annotations %+v, want readOnly %v destructive %v idempotent", tool.Name, a, w.readOnly, w.destructive)
		}
		b, _ := json.Marshal(map[string]any{"in": tool.InputSchema, "out": tool.OutputSchema})
		var m map[string]any
		json.Unmarshal(b, &m)
		schemas[tool.Name] = m
	}
	for name := range want {
		t.Errorf("tool %s missing", name)
	}
	// Writes require the key, in the header's format; the body is the spec's.
	in := schemas["create_risk"]["in"].(map[string]any)
	if req := in["required"].([]any); !contains(req, "idempotencyKey") || !contains(req, "risk") {
		t.Errorf("create_risk requires %v", req)
	}
	key := in["properties"].(map[string]any)["idempotencyKey"].(map[string]any)
	if key["pattern"] != "^[A-Za-z0-9._-]{8,128}$" {
		t.Errorf("idempotencyKey schema %v", key)
	}
	risk, _ := json.Marshal(in["properties"].(map[string]any)["risk"])
	if !json.Valid(risk) || !containsAll(string(risk), `"maxLength":200`, `"title"`, `"likelihood"`) {
		t.Errorf("create_risk's risk schema is not the spec's RiskCreate: %s", risk)
	}
	// Filters of the register are list_risks' arguments.
	props := schemas["list_risks"]["in"].(map[string]any)["properties"].(map[string]any)
	for _, f := range []string{"status", "treatment", "owner", "minScore", "q", "metadata", "sort", "cursor"} {
		if props[f] == nil {
			t.Errorf("list_risks lacks the filter %s (has %v)", f, keys(props))
		}
	}
	var out []byte
	// The heat map takes movedSince as the route does: a date, with the route's bound.
	hm := schemas["get_heatmap"]["in"].(map[string]any)["properties"].(map[string]any)
	if ms, _ := hm["movedSince"].(map[string]any); ms == nil || ms["format"] != "date" ||
		!strings.Contains(fmt.Sprint(ms["description"]), "50,000") {
		t.Errorf("get_heatmap's movedSince %v (has %v)", hm["movedSince"], keys(hm))
	}
	out, _ = json.Marshal(schemas["get_heatmap"]["out"])
	if !containsAll(string(out), `"moves"`, `"movedSince"`) {
		t.Errorf("get_heatmap output lacks moves: %s", out)
	}
	// The output carries the route's answer: a risk, with its version.
	out, _ = json.Marshal(schemas["get_risk"]["out"])
	if !containsAll(string(out), `"result"`, `"version"`, `"riskScore"`) {
		t.Errorf("get_risk output %s", out)
	}
}

func contains(list []any, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !json.Valid([]byte(s)) || !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
