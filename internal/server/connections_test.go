package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
)

// serveReal runs env's real HTTP server (app.Serve, with its connection timeouts) until
// the test ends and returns its address.
func serveReal(t *testing.T, env *apitest.Env) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- env.App.Serve(ctx, func(a net.Addr) { addrc <- a }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case a := <-addrc:
		return a.String()
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("server did not start")
	}
	return ""
}

// readResponse reads one response from conn, failing the test if none comes
// within limit.
func readResponse(t *testing.T, conn net.Conn, br *bufio.Reader, limit time.Duration) *http.Response {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(limit))
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no response within %s: %v", limit, err)
	}
	return res
}

func problemOf(t *testing.T, res *http.Response) (code string, fields string) {
	t.Helper()
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("%d with Content-Type %q, want a problem", res.StatusCode, ct)
	}
	var p struct {
		Code   string
		Errors []struct{ Field, Detail string }
	}
	if err := json.NewDecoder(res.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Errors {
		fields += f.Field + ": " + f.Detail + "; "
	}
	return p.Code, fields
}

// TestConnectionTimeouts: an idle keep-alive connection is closed after
// HTTP_IDLE_TIMEOUT; headers that do not arrive in time close the connection; a JSON
// body sent a byte at a time is cut at its deadline with a 400 naming body; an upload
// has no total deadline but a minimum rate: a slow one that keeps the rate completes
// after several windows, one that stalls is cut within a window (README.md,
// Connections). The test's timeouts are shortened versions of the defaults.
func TestConnectionTimeouts(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *config.Config) {
		c.HTTP.IdleTimeout = 500 * time.Millisecond
		c.HTTP.HeaderTimeout = 500 * time.Millisecond
		c.HTTP.BodyTimeout = time.Second
		c.HTTP.UploadMinRate, c.HTTP.UploadRateWindow = 1000, 500*time.Millisecond
	})
	a := env.Tenant("Acme")
	addr := serveReal(t, env)
	dial := func() (net.Conn, *bufio.Reader) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn, bufio.NewReader(conn)
	}
	closedWithin := func(what string, conn net.Conn, br *bufio.Reader, limit time.Duration) {
		t.Helper()
		conn.SetReadDeadline(time.Now().Add(limit))
		if _, err := br.ReadByte(); err != io.EOF {
			t.Errorf("%s: connection not closed within %s (%v)", what, limit, err)
		}
	}

	t.Run("idle keep-alive", func(t *testing.T) {
		conn, br := dial()
		fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		res := readResponse(t, conn, br, 5*time.Second)
		io.Copy(io.Discard, res.Body)
		if res.StatusCode != 200 || res.Close {
			t.Fatalf("healthz: %d close=%v", res.StatusCode, res.Close)
		}
		closedWithin("idle", conn, br, 5*time.Second)
	})

	t.Run("slow headers", func(t *testing.T) {
		conn, br := dial()
		fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n")
		closedWithin("headers never finished", conn, br, 5*time.Second)
	})

	t.Run("slow JSON body", func(t *testing.T) {
		conn, br := dial()
		body := `{"title":"a slow loris"}`
		fmt.Fprintf(conn, "POST /v2/risks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", a.Key, len(body))
		stop := make(chan struct{})
		defer close(stop)
		go func() { // one byte every 200 ms: 5 s for the whole body
			for i := range len(body) {
				select {
				case <-stop:
					return
				case <-time.After(200 * time.Millisecond):
				}
				if _, err := conn.Write([]byte{body[i]}); err != nil {
					return
				}
			}
		}()
		start := time.Now()
		res := readResponse(t, conn, br, 8*time.Second)
		code, fields := problemOf(t, res)
		if res.StatusCode != 400 || code != "VALIDATION_FAILED" || !strings.Contains(fields, "body: arrived too slowly") {
			t.Errorf("slow body: %d %s %s, want 400 VALIDATION_FAILED naming body", res.StatusCode, code, fields)
		}
		if took := time.Since(start); took > 4*time.Second {
			t.Errorf("cut after %s, want about the 1 s deadline", took)
		}
	})

	var risk struct{ ID string }
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "r"}}).Expect(201).Decode(&risk)
	upload := func(chunk int, every time.Duration, chunks int, stallAfter int) *http.Response {
		conn, br := dial()
		file := strings.Repeat("u", chunk*chunks)
		body, ct := apitest.Multipart("pace-boundary", apitest.FilePart("file", "slow.bin", "", file))
		fmt.Fprintf(conn, "POST /v2/risks/%s/attachments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: %s\r\nContent-Length: %d\r\n\r\n", risk.ID, a.Key, ct, len(body))
		go func() {
			head := len(body) - len(file) - len("\r\n--pace-boundary--\r\n")
			conn.Write(body[:head])
			rest := body[head:]
			for i := 0; len(rest) > 0; i++ {
				if i == stallAfter {
					return
				}
				time.Sleep(every)
				n := min(chunk, len(rest))
				if _, err := conn.Write(rest[:n]); err != nil {
					return
				}
				rest = rest[n:]
			}
		}()
		return readResponse(t, conn, br, 10*time.Second)
	}

	t.Run("slow upload above the minimum rate", func(t *testing.T) {
		// 1,200 bytes every 250 ms for 2.5 s: five windows, every one above the rate.
		res := upload(1200, 250*time.Millisecond, 10, -1)
		defer res.Body.Close()
		if res.StatusCode != 201 {
			b, _ := io.ReadAll(res.Body)
			t.Errorf("slow upload: %d %s, want 201", res.StatusCode, b)
		}
	})

	t.Run("stalled upload", func(t *testing.T) {
		start := time.Now()
		res := upload(1200, 100*time.Millisecond, 10, 2)
		code, fields := problemOf(t, res)
		if res.StatusCode != 400 || code != "VALIDATION_FAILED" || !strings.Contains(fields, "body: arrived too slowly") {
			t.Errorf("stalled upload: %d %s %s, want 400 VALIDATION_FAILED naming body", res.StatusCode, code, fields)
		}
		if took := time.Since(start); took > 4*time.Second {
			t.Errorf("cut after %s, want within about one 500 ms window", took)
		}
		for _, f := range env.StoredFiles() {
			if strings.HasPrefix(f, "tmp/") {
				t.Errorf("the stalled upload left %s behind", f)
			}
		}
	})
}
