package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/reqbody"
)

// countingBody is a request body that counts what it serves.
type countingBody struct {
	r               io.Reader
	bytes, afterEOF int
	eof             bool
}

func (b *countingBody) Read(p []byte) (int, error) {
	if b.eof {
		b.afterEOF++
	}
	n, err := b.r.Read(p)
	b.bytes += n
	b.eof = b.eof || err == io.EOF
	return n, err
}

func (b *countingBody) Close() error { return nil }

// TestKeyedBodyIsReadOnce: a keyed JSON write's body is consumed once, for the
// fingerprint and the handler together (internal/reqbody), on the first run and on
// a replay — and what the handler stored is what was sent.
func TestKeyedBodyIsReadOnce(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	const body = `{"title":"read once","likelihood":3.0,"impact":2e0}`
	for _, want := range []int{201, 201} { // run, then replay
		src := &countingBody{r: strings.NewReader(body)}
		req := httptest.NewRequest(http.MethodPost, "/v2/risks", src)
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+a.Key)
		req.Header.Set("Idempotency-Key", "read-once-1")
		r := env.DoRaw(req).Expect(want)
		if m := r.Map(); m["title"] != "read once" || m["likelihood"] != 3.0 || m["impact"] != 2.0 {
			t.Fatalf("stored %v", m)
		}
		if src.bytes != len(body) || src.afterEOF != 0 {
			t.Fatalf("the body served %d bytes, %d reads after its end; want %d bytes, read once",
				src.bytes, src.afterEOF, len(body))
		}
	}
}

// TestClientHangingUpMidBodyIsNever500: a real client sends part of a body and hangs
// up — with a Content-Length it never reaches, or mid-chunk — on JSON, multipart and
// webhook routes, with and without Idempotency-Key. Every such request is answered 400
// VALIDATION_FAILED "the request body ended early" (docs/errors.md), never 500, and
// the server logs no ERROR. With a half-close the client still reads the answer;
// with a full close the server's request log line says what it answered.
func TestClientHangingUpMidBodyIsNever500(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	riskID := newRiskID(t, env, a.Key)
	if _, err := env.App.Webhooks.CreateSource(t.Context(), a.ID, "scanner"); err != nil {
		t.Fatal(err)
	}
	srv := env.Server()
	addr := strings.TrimPrefix(srv.URL, "http://")

	form, formType := apitest.Multipart("b0undary", apitest.FilePart("file", "a.txt", "text/plain", strings.Repeat("x", 4096)))
	cases := []struct {
		name, method, path, contentType string
		part                            []byte
		full                            int // declared Content-Length; 0: chunked
	}{
		{"json", "POST", "/v2/risks", "application/json", []byte(`{"title":"half a ti`), 200},
		{"json-chunked", "POST", "/v2/risks", "application/json", []byte(`{"title":"half a ti`), 0},
		{"json-patch", "PATCH", "/v2/risks/" + riskID, "application/json", []byte(`{"status":"mitig`), 100},
		{"multipart", "POST", "/v2/risks/" + riskID + "/attachments", formType, form[:len(form)/2], len(form)},
		{"multipart-chunked", "POST", "/v2/risks/" + riskID + "/attachments", formType, form[:len(form)/2], 0},
		// Refuses Idempotency-Key before reading anything: its keyed case is a 422.
		{"webhook", "POST", "/webhooks/inbound/scanner", "application/json", []byte(`{"id":"evt_1","ty`), 300},
	}
	n := 0
	for _, tc := range cases {
		for _, keyed := range []bool{false, true} {
			if keyed && tc.name == "webhook" {
				continue
			}
			for _, halfClose := range []bool{true, false} {
				n++
				rid := fmt.Sprintf("hangup-%d", n)
				name := fmt.Sprintf("%s keyed=%v halfClose=%v", tc.name, keyed, halfClose)
				var head bytes.Buffer
				fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nX-Request-Id: %s\r\n",
					tc.method, tc.path, addr, a.Key, tc.contentType, rid)
				if keyed {
					fmt.Fprintf(&head, "Idempotency-Key: %s\r\n", rid+"-key")
				}
				body := tc.part
				if tc.full > 0 {
					fmt.Fprintf(&head, "Content-Length: %d\r\n", tc.full)
				} else {
					head.WriteString("Transfer-Encoding: chunked\r\n")
					// One chunk announced at twice the bytes that follow.
					body = append([]byte(fmt.Sprintf("%x\r\n", 2*len(tc.part))), tc.part...)
				}
				head.WriteString("\r\n")
				status, answer := hangUp(t, addr, append(head.Bytes(), body...), halfClose)
				if halfClose && (status != http.StatusBadRequest || answer.Code != "VALIDATION_FAILED" ||
					len(answer.Errors) != 1 || answer.Errors[0].Field != "body" || answer.Errors[0].Detail != reqbody.EndedEarly) {
					t.Errorf("%s: answered %d %+v, want 400 VALIDATION_FAILED body: %s", name, status, answer, reqbody.EndedEarly)
				}
				if logged := loggedStatus(t, env, rid); logged != http.StatusBadRequest {
					t.Errorf("%s: request log says %d, want 400", name, logged)
				}
			}
		}
	}
	if logs := env.LogText(); strings.Contains(logs, `"level":"ERROR"`) {
		t.Errorf("the server logged an ERROR for a client hanging up:\n%s", errorLines(logs))
	}
	// Nothing half-sent was stored.
	list := env.Do(apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key}).Expect(200).Map()
	if d, _ := list["data"].([]any); len(d) != 1 {
		t.Errorf("%d risks listed, want only the one created up front", len(d))
	}
	if files := env.StoredFiles(); len(files) != 0 {
		t.Errorf("files left behind: %v", files)
	}
}

// problemAnswer is the part of a problem+json answer the hang-up test checks.
type problemAnswer struct {
	Code   string `json:"code"`
	Errors []struct {
		Field  string `json:"field"`
		Detail string `json:"detail"`
	} `json:"errors"`
}

// hangUp sends raw over a fresh connection and hangs up: a half-close (the client
// can still read the answer, which it returns) or a full close (returns 0).
func hangUp(t *testing.T, addr string, raw []byte, halfClose bool) (int, problemAnswer) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(raw); err != nil {
		t.Fatal(err)
	}
	var answer problemAnswer
	if !halfClose {
		return 0, answer
	}
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(&answer); err != nil {
		t.Fatalf("the answer is not problem+json: %v", err)
	}
	return res.StatusCode, answer
}

// loggedStatus waits for the request log line of request id rid and returns its status.
func loggedStatus(t *testing.T, env *apitest.Env, rid string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(env.LogText(), "\n") {
			var l struct {
				Msg       string `json:"msg"`
				RequestID string `json:"requestId"`
				Status    int    `json:"status"`
			}
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "request" && l.RequestID == rid {
				return l.Status
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no request log line for %s", rid)
	return 0
}

func errorLines(logs string) string {
	var out []string
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"level":"ERROR"`) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

func newRiskID(t *testing.T, env *apitest.Env, key string) string {
	t.Helper()
	r := env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: key, Body: `{"title":"whole"}`}).Expect(201)
	id, _ := r.Map()["id"].(string)
	if id == "" || url.PathEscape(id) != id {
		t.Fatalf("risk id %q", id)
	}
	return id
}
