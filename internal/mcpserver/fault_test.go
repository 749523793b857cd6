package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/netfault"
)

// The connection is cut after the write committed and before its answer reached the
// agent; the agent retries with the same key and gets the first write's result.
func TestCutAfterCommitRetryReplays(t *testing.T) {
	env := apitest.New(t)
	ten := env.Tenant("acme")
	base := server(t, env)
	u, _ := url.Parse(base)
	proxy := netfault.StartT(t, u.Host)
	cs := connect(t, "http://"+proxy.Addr(), ten.Key)

	args := map[string]any{"idempotencyKey": "fault-cut-key-1", "risk": map[string]any{"title": "Cut"}}
	proxy.CutAfter([]byte("fault-cut-key-1"))
	if _, err := callErr(cs, "create_risk", args); err == nil {
		t.Fatal("the call was answered through a cut connection")
	}
	if proxy.PatternCuts() != 1 {
		t.Fatalf("%d cuts, want 1", proxy.PatternCuts())
	}
	proxy.Restore()
	// The write committed although the agent never heard of it.
	if n := countRisks(t, env, ten.Key); n != 1 {
		t.Fatalf("%d risks after the cut, want 1 (committed before the answer was lost)", n)
	}
	// The agent retries, in the same session if it still works, else a new one.
	out, err := callErr(cs, "create_risk", args)
	if err != nil {
		out = mustOK(t, connect(t, "http://"+proxy.Addr(), ten.Key), "create_risk", args)
	}
	if out["replayed"] != true || out["__isError"] == true {
		t.Fatalf("retry after the cut: %v, want the replay", out)
	}
	if n := countRisks(t, env, ten.Key); n != 1 {
		t.Fatalf("%d risks after the retry, want 1", n)
	}
}

// rpcIDs records the JSON-RPC id of every tools/call the client sends.
type rpcIDs struct {
	mu   sync.Mutex
	ids  []string
	next http.RoundTripper
}

func (r *rpcIDs) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		b, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(b))
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(b, &msg) == nil && msg.Method == "tools/call" {
			r.mu.Lock()
			r.ids = append(r.ids, string(msg.ID))
			r.mu.Unlock()
		}
	}
	return r.next.RoundTrip(req)
}

// A new session numbers its JSON-RPC requests from the start again: two different
// writes under the same request id are two writes, because keys never derive from it.
func TestReconnectReusingRequestIDsKeepsWritesApart(t *testing.T) {
	env := apitest.New(t)
	ten := env.Tenant("acme")
	base := server(t, env)
	open := func(ids *rpcIDs) *mcp.ClientSession {
		ids.next = bearer{key: ten.Key, next: http.DefaultTransport}
		tr := &mcp.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1, DisableStandaloneSSE: true,
			HTTPClient: &http.Client{Transport: ids}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1.2.3"}, nil).Connect(t.Context(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	var first, second rpcIDs
	cs1 := open(&first)
	a := mustOK(t, cs1, "create_risk", map[string]any{"idempotencyKey": "reconnect-a", "risk": map[string]any{"title": "First"}})
	cs1.Close()
	cs2 := open(&second)
	defer cs2.Close()
	b := mustOK(t, cs2, "create_risk", map[string]any{"idempotencyKey": "reconnect-b", "risk": map[string]any{"title": "Second"}})
	if len(first.ids) != 1 || len(second.ids) != 1 || first.ids[0] != second.ids[0] {
		t.Fatalf("JSON-RPC ids %v and %v: the test needs the same id in both sessions", first.ids, second.ids)
	}
	if b["replayed"] != false || resultOf(t, b)["id"] == resultOf(t, a)["id"] || resultOf(t, b)["title"] != "Second" {
		t.Fatalf("second session's write under the same JSON-RPC id: %v (first %v)", b, a)
	}
	// And the first write's key still replays it from the new session.
	again := mustOK(t, cs2, "create_risk", map[string]any{"idempotencyKey": "reconnect-a", "risk": map[string]any{"title": "First"}})
	if again["replayed"] != true || resultOf(t, again)["id"] != resultOf(t, a)["id"] {
		t.Fatalf("retry of the first write from the new session: %v", again)
	}
	if n := countRisks(t, env, ten.Key); n != 2 {
		t.Fatalf("%d risks, want 2", n)
	}
}
