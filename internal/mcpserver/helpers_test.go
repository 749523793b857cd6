package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/riskapi/riskapi/internal/apitest"
)

// bearer adds an API key to every request of the MCP client.
type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

// server serves env's router over a real listener, as an agent reaches it.
func server(t *testing.T, env *apitest.Env) string { return serverB(t, env) }

func serverB(tb testing.TB, env *apitest.Env) string {
	tb.Helper()
	srv := httptest.NewServer(env.App.Echo)
	tb.Cleanup(srv.Close)
	return srv.URL
}

// connect opens an MCP session with the official SDK's client, as an agent named
// "test-agent" 1.2.3, authenticated by key, to base (an http://host:port).
func connect(t *testing.T, base, key string) *mcp.ClientSession {
	t.Helper()
	return connectAs(t, base, key, &mcp.Implementation{Name: "test-agent", Version: "1.2.3"})
}

func connectB(tb testing.TB, base, key string) *mcp.ClientSession {
	return connectAs(tb, base, key, &mcp.Implementation{Name: "bench-agent", Version: "1"})
}

func connectAs(t testing.TB, base, key string, impl *mcp.Implementation) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := mcp.NewClient(impl, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: bearer{key: key, next: http.DefaultTransport}}}
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and returns its structured content and whether it is an error.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res, err := callErr(cs, name, args)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res, res["__isError"] == true
}

// callErr is call without failing the test on a protocol or transport error.
func callErr(cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, err
	}
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil || out == nil {
		out = map[string]any{}
	}
	if res.IsError {
		out["__isError"] = true
	}
	return out, nil
}

// mustOK fails the test unless the call succeeded.
func mustOK(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	out, isErr := call(t, cs, name, args)
	if isErr {
		t.Fatalf("%s: tool error %v", name, out)
	}
	return out
}

// mustFail fails the test unless the call is a tool error of code.
func mustFail(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, code string) map[string]any {
	t.Helper()
	out, isErr := call(t, cs, name, args)
	if !isErr || out["code"] != code {
		t.Fatalf("%s: got %v (error %v), want tool error %s", name, out, isErr, code)
	}
	return out
}

// resultOf returns the result member of a tool's answer.
func resultOf(t *testing.T, out map[string]any) map[string]any {
	t.Helper()
	r, ok := out["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result in %v", out)
	}
	return r
}

// countRisks counts the tenant's risks over HTTP.
func countRisks(t *testing.T, env *apitest.Env, key string) int {
	t.Helper()
	var page struct {
		Data []map[string]any `json:"data"`
	}
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks?limit=100", Bearer: key}).Expect(http.StatusOK).Decode(&page)
	return len(page.Data)
}

func jsonDecode(resp *http.Response, v any) error { return json.NewDecoder(resp.Body).Decode(v) }
