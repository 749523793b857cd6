package mcpserver_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/apiversion"
)

// An HTTP write then the same write as a tool call with its key, and the other way
// round: one execution, the second answered from the first's record. The tenant is
// pinned to 2026-12-01; tools speak the newest version (docs/mcp.md), as the SDKs'
// HTTP requests do, so one key is one write across both.
func TestKeyReplaysAcrossHTTPAndMCP(t *testing.T) {
	env := apitest.New(t)
	ten := env.Tenant("acme")
	newest := string(apiversion.API.Newest())
	cs := connect(t, server(t, env), ten.Key)

	// HTTP first. The tool's body differs in key order and number spelling only.
	httpFirst := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: ten.Key,
		Header: http.Header{"Idempotency-Key": {"cross-http-first"}, apiversion.Header: {newest}},
		Body:   `{"title":"Backups untested","likelihood":2,"impact":5}`}).Expect(http.StatusCreated).Map()
	out := mustOK(t, cs, "create_risk", map[string]any{"idempotencyKey": "cross-http-first",
		"risk": map[string]any{"impact": 5.0, "title": "Backups untested", "likelihood": 2}})
	if out["replayed"] != true || resultOf(t, out)["id"] != httpFirst["id"] {
		t.Fatalf("tool after HTTP: %v, want the replay of %v", out, httpFirst["id"])
	}

	// MCP first.
	mcpFirst := mustOK(t, cs, "create_risk", map[string]any{"idempotencyKey": "cross-mcp-first",
		"risk": map[string]any{"title": "Laptops unencrypted", "owner": map[string]any{"name": "it@example.com"}}})
	if mcpFirst["replayed"] != false {
		t.Fatalf("first call replayed: %v", mcpFirst)
	}
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: ten.Key,
		Header: http.Header{"Idempotency-Key": {"cross-mcp-first"}, apiversion.Header: {newest}},
		Body:   `{ "owner": {"name": "it@example.com"}, "title": "Laptops unencrypted" }`}).Expect(http.StatusCreated)
	if resp.Header().Get("Idempotent-Replayed") != "true" || resp.Map()["id"] != resultOf(t, mcpFirst)["id"] {
		t.Fatalf("HTTP after tool: %s %v, want the replay of %v", resp.Header().Get("Idempotent-Replayed"), resp.Map(), resultOf(t, mcpFirst)["id"])
	}

	// An update, tool first: the HTTP PATCH with the key replays it.
	id := resultOf(t, mcpFirst)["id"].(string)
	upd := mustOK(t, cs, "update_risk", map[string]any{"idempotencyKey": "cross-update-1", "id": id,
		"ifMatch": mcpFirst["etag"], "risk": map[string]any{"status": "mitigated"}})
	if resultOf(t, upd)["version"] != float64(2) {
		t.Fatalf("update: %v", upd)
	}
	patch := env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + id, Bearer: ten.Key,
		Header: http.Header{"Idempotency-Key": {"cross-update-1"}, "If-Match": {mcpFirst["etag"].(string)}, apiversion.Header: {newest}},
		Body:   `{"status":"mitigated"}`}).Expect(http.StatusOK)
	if patch.Header().Get("Idempotent-Replayed") != "true" || patch.Map()["version"] != float64(2) {
		t.Fatalf("PATCH after tool: %s %v", patch.Header().Get("Idempotent-Replayed"), patch.Map())
	}
	if n := countRisks(t, env, ten.Key); n != 2 {
		t.Fatalf("%d risks, want 2", n)
	}
}

// import_risks sends its CSV as the file part "file", risks.csv, text/csv: an HTTP
// import of the same bytes so named replays it.
func TestImportReplaysAcrossMCPAndHTTP(t *testing.T) {
	env := apitest.New(t)
	ten := env.Tenant("acme")
	cs := connect(t, server(t, env), ten.Key)
	csv := "title,likelihood,impact\nPhishing,4,3\nFlood,1,5\n"
	first := mustOK(t, cs, "import_risks", map[string]any{"idempotencyKey": "import-key-1", "csv": csv})
	if first["replayed"] != false || first["status"] != float64(201) {
		t.Fatalf("import: %v", first)
	}
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="risks.csv"`)
	h.Set("Content-Type", "text/csv")
	part, _ := w.CreatePart(h)
	part.Write([]byte(csv))
	w.Close()
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/import", Bearer: ten.Key, Body: b.String(),
		Header: http.Header{"Idempotency-Key": {"import-key-1"}, "Content-Type": {w.FormDataContentType()},
			apiversion.Header: {string(apiversion.API.Newest())}}}).Expect(http.StatusCreated)
	if resp.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("HTTP import after the tool ran again: %s", resp.Body.String())
	}
	if n := countRisks(t, env, ten.Key); n != 2 {
		t.Fatalf("%d risks, want 2", n)
	}
}

// Tools answer in the newest version, the one their schemas (docs/openapi.yaml)
// describe, even for a tenant still pinned to 2026-12-01, whose HTTP clients read
// the owner as a string.
func TestToolsSpeakTheNewestVersionOnAnOldPin(t *testing.T) {
	env := apitest.New(t)
	ten := env.Tenant("acme")
	cs := connect(t, server(t, env), ten.Key)
	created := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: ten.Key,
		Body: `{"title":"Vendor lock-in","owner":"cto@example.com"}`}).Expect(http.StatusCreated).Map()
	if created["owner"] != "cto@example.com" {
		t.Fatalf("HTTP in the pin: owner %v, want the string", created["owner"])
	}
	got := mustOK(t, cs, "get_risk", map[string]any{"id": created["id"]})
	owner, ok := resultOf(t, got)["owner"].(map[string]any)
	if !ok || owner["name"] != "cto@example.com" || owner["userId"] != nil {
		t.Fatalf("get_risk owner %v, want {userId: null, name: cto@example.com}", resultOf(t, got)["owner"])
	}
}
