package mcpserver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/riskapi/riskapi/internal/apitest"
	riskapi "github.com/riskapi/riskapi/sdk"
)

// The audit log and the request log name a change made over MCP, and the client.
func TestLogsNameTheMCPClient(t *testing.T) {
	env := apitest.New(t)
	ten := env.Tenant("acme")
	base := server(t, env)
	cs := connectAs(t, base, ten.Key, &mcp.Implementation{Name: "risk-agent", Version: "0.9.1"})
	out := mustOK(t, cs, "create_risk", map[string]any{"idempotencyKey": "logs-key-1", "risk": map[string]any{"title": "Logged"}})
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: ten.Key, Body: `{"title":"Plain"}`}).Expect(http.StatusCreated)

	var audit struct {
		Data []map[string]any `json:"data"`
	}
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/audit-log?action=risk.created", Bearer: ten.Key}).Expect(http.StatusOK).Decode(&audit)
	if len(audit.Data) != 2 {
		t.Fatalf("audit: %v", audit.Data)
	}
	plain, viaMCP := audit.Data[0], audit.Data[1] // newest first
	if viaMCP["via"] != "mcp" || viaMCP["client"] != "risk-agent/0.9.1" || viaMCP["requestId"] != out["requestId"] {
		t.Fatalf("audit entry of the tool call: %v (call %v)", viaMCP, out)
	}
	if plain["via"] != nil || plain["client"] != nil {
		t.Fatalf("audit entry of plain HTTP: %v", plain)
	}

	// The Go SDK reads them.
	sdk, err := riskapi.NewClient(ten.Key, riskapi.WithBaseURL(base))
	if err != nil {
		t.Fatal(err)
	}
	page, err := sdk.AuditLog.ListPage(context.Background(), &riskapi.AuditListParams{Action: "risk.created"})
	if err != nil || len(page.Data) != 2 || page.Data[1].Via != "mcp" || page.Data[1].Client != "risk-agent/0.9.1" || page.Data[0].Via != "" {
		t.Fatalf("the Go SDK's audit entries: %v %+v", err, page)
	}

	// The process's log line of the /v2 request names the envelope and client.
	if logs := env.LogText(); !strings.Contains(logs, `"via":"mcp","client":"risk-agent/0.9.1"`) {
		t.Errorf("no log line names the MCP call: %s", logs)
	}
	// The request log is written off the request path: wait for the tool call's entry.
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/requests/" + out["requestId"].(string), Bearer: ten.Key})
		if resp.Code == http.StatusOK {
			e := resp.Map()
			if e["via"] != "mcp" || e["client"] != "risk-agent/0.9.1" || e["idempotencyKey"] != "logs-key-1" || e["route"] != "/v2/risks" {
				t.Fatalf("request-log entry of the tool call: %v", e)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no request-log entry for %v: %d %s", out["requestId"], resp.Code, resp.Body.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
