package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/netfault"
)

// TestHangUpIsLoggedAs499: a client that hangs up while its request waits on the
// store is neither a store failure nor a server error. Its access line says 499
// (nginx's "client closed request") at INFO, no ERROR line is written, an unkeyed
// write not yet sent is never sent (a keyed one runs to its end, once), and the
// server goes on serving. Before, the cancelled statement broke its PostgreSQL
// connection and the request was logged as a 500 or 503 at ERROR: a flood of
// hang-ups, which needs no valid credential, filled the log with failures that
// never happened.
func TestHangUpIsLoggedAs499(t *testing.T) {
	t.Parallel()
	env, px, a, srv := servedThroughProxy(t)

	px.Stall() // each request's first statement (its API key's lookup) waits here
	rids := map[string]string{"req-hangup-unkeyed": "", "req-hangup-keyed": "hangup-key-1"}
	var wg sync.WaitGroup
	for rid, idemKey := range rids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, hangUp := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer hangUp()
			req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v2/risks", bytes.NewReader([]byte(`{"title":"left behind"}`)))
			req.Header.Set("Authorization", "Bearer "+a.Key)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Request-Id", rid)
			if idemKey != "" {
				req.Header.Set("Idempotency-Key", idemKey)
			}
			if res, err := http.DefaultClient.Do(req); err == nil {
				res.Body.Close()
				t.Errorf("%s was answered %d through a stalled store", rid, res.StatusCode)
			}
		}()
	}
	wg.Wait()
	time.Sleep(200 * time.Millisecond)
	px.Restore()

	for rid := range rids {
		var line map[string]any
		deadline := time.Now().Add(10 * time.Second)
		for line == nil && time.Now().Before(deadline) {
			for _, l := range strings.Split(env.LogText(), "\n") {
				if strings.Contains(l, rid) && strings.Contains(l, `"msg":"request"`) {
					_ = json.Unmarshal([]byte(l), &line)
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		if line == nil {
			t.Fatalf("no access line for %s, whose client hung up; log:\n%s", rid, env.LogText())
		}
		// A keyed write runs to its end whoever hangs up (docs/idempotency.md), so
		// that the client's retry finds it done; an unkeyed one stops there.
		want := 499.0
		if rids[rid] != "" {
			want = 201.0
		}
		if line["status"] != want || line["level"] != "INFO" {
			t.Errorf("access line %v, want status %v at INFO", line, want)
		}
	}
	if logs := env.LogText(); strings.Contains(logs, `"level":"ERROR"`) {
		t.Errorf("a client hanging up was logged as an error:\n%s", logs)
	}
	var list struct{ Data []any }
	eventually(t, env, apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key}).Decode(&list)
	if len(list.Data) != 1 {
		t.Errorf("%d risks, want 1: the keyed write done once, the unkeyed one never sent", len(list.Data))
	}
}

// TestHalfCloseDuringAStoreCall: a client that sends a whole request and then
// closes its sending side (as nc -N and socat do) is, to net/http, a client that
// hung up: the request's context is cancelled. When that stops the request's store
// work, the connection is closed without an answer — never a status made up for
// it (a 499 on the wire, or a 500 or 503 for a failure that did not happen) — and
// the access line says 499 (docs/errors.md, "A client that hangs up").
func TestHalfCloseDuringAStoreCall(t *testing.T) {
	t.Parallel()
	env, px, a, srv := servedThroughProxy(t)

	px.Stall()
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v2/risks HTTP/1.1\r\nHost: riskapi\r\nAuthorization: Bearer %s\r\nX-Request-Id: req-halfclose-0001\r\n\r\n", a.Key)
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(500*time.Millisecond, px.Restore)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if got, err := io.ReadAll(conn); len(got) != 0 || err != nil {
		t.Fatalf("a half-closed client whose request stopped was answered %q (%v), want the connection closed", got, err)
	}
	if logged := loggedStatus(t, env, "req-halfclose-0001"); logged != 499 {
		t.Errorf("access line says %d, want 499", logged)
	}
}

// servedThroughProxy starts riskapi on PostgreSQL behind a proxy the test can stall
// (proxied), with a tenant, a warm pool and a real listener for raw clients.
func servedThroughProxy(t *testing.T) (*apitest.Env, *netfault.Proxy, *apitest.Tenant, *httptest.Server) {
	t.Helper()
	env, px := proxied(t, 10*time.Second)
	a := env.Tenant("Acme")
	warm(t, env, a)
	return env, px, a, env.Server()
}
