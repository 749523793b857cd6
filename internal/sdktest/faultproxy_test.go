package sdktest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// faultProxy is a reverse proxy, served by its own httptest server over
// loopback, that sits in front of a real riskapi server and injects faults
// into chosen requests. A request is matched by method, path and attempt
// number (the how-many-th request with that method and path the proxy has
// received, from 1); unmatched requests are forwarded untouched. Every request
// it receives is recorded.
type faultProxy struct {
	URL string

	t        testing.TB
	target   string
	srv      *httptest.Server
	outbound *http.Client

	mu     sync.Mutex
	rules  []proxyRule
	counts map[string]int
	seen   []*proxiedRequest
}

// proxyRule applies fault to the attempt-th request of method and path, or to
// every one when attempt is 0.
type proxyRule struct {
	method, path string
	attempt      int
	fault        proxyFault
}

type proxyAction int

const (
	// actForward passes the request on and the answer back.
	actForward proxyAction = iota
	// actCutAfterAnswer forwards the request, reads the server's whole
	// answer (so its write and idempotency record are committed), then
	// closes the client's connection without sending a byte of it.
	actCutAfterAnswer
	// actHoldAnswer forwards the request and reads the whole answer, then
	// holds it back until the client hangs up or delay passes.
	actHoldAnswer
	// actDelay waits delay (less if the client hangs up, in which case
	// the request is never forwarded), then forwards.
	actDelay
	// actAnswer answers status itself without forwarding.
	actAnswer
)

func (a proxyAction) String() string {
	return [...]string{"forward", "cut-after-answer", "hold-answer", "delay", "answer"}[a]
}

// proxyFault is what the proxy does with a matched request.
type proxyFault struct {
	action     proxyAction
	delay      time.Duration
	status     int
	code       string
	retryAfter string
}

// pxCutAfterAnswer lets the server answer completely, then cuts the client's
// connection: the write happened, the client never hears of it.
func pxCutAfterAnswer() proxyFault { return proxyFault{action: actCutAfterAnswer} }

// pxHoldAnswer lets the server answer, then withholds the answer for up to d
// or until the client gives up waiting.
func pxHoldAnswer(d time.Duration) proxyFault { return proxyFault{action: actHoldAnswer, delay: d} }

// pxDelay forwards after d, or never if the client hangs up first.
func pxDelay(d time.Duration) proxyFault { return proxyFault{action: actDelay, delay: d} }

// pxAnswer answers with a problem of status and code (and Retry-After when
// retryAfter is not empty) without forwarding: the server never sees it.
func pxAnswer(status int, code, retryAfter string) proxyFault {
	return proxyFault{action: actAnswer, status: status, code: code, retryAfter: retryAfter}
}

// proxiedRequest records one request the proxy received and what became of it.
type proxiedRequest struct {
	Method, Path string
	// Key is the Idempotency-Key header, empty when absent.
	Key string
	// Attempt is the request's number among those with the same method and
	// path, from 1.
	Attempt int
	// Action is what the proxy did with it.
	Action proxyAction
	// BodyLen and BodySHA256 describe the request body as received;
	// Chunked, that it came without a Content-Length.
	BodyLen    int
	BodySHA256 string
	Chunked    bool
	// Forwarded reports whether the request reached the server; Status and
	// Replayed are then the server's answer (status, Idempotent-Replayed:
	// true), whether or not the client got it.
	Forwarded bool
	Status    int
	Replayed  bool
}

// newFaultProxy starts a proxy in front of target (a base URL) and stops it
// when the test ends.
func newFaultProxy(t testing.TB, target string) *faultProxy {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	p := &faultProxy{
		t:      t,
		target: strings.TrimRight(target, "/"),
		outbound: &http.Client{
			Transport:     tr,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		counts: map[string]int{},
	}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	p.URL = p.srv.URL
	t.Cleanup(func() {
		p.srv.Close() // waits for handlers still running
		tr.CloseIdleConnections()
	})
	return p
}

// on applies f to the attempt-th request (from 1) with method and path.
func (p *faultProxy) on(method, path string, attempt int, f proxyFault) {
	if attempt < 1 {
		p.t.Fatalf("faultProxy.on: attempt %d, want >= 1 (use always)", attempt)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = append(p.rules, proxyRule{method: method, path: path, attempt: attempt, fault: f})
}

// always applies f to every request with method and path.
func (p *faultProxy) always(method, path string, f proxyFault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = append(p.rules, proxyRule{method: method, path: path, fault: f})
}

// requests returns a copy of the requests received so far, in arrival order.
func (p *faultProxy) requests() []proxiedRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]proxiedRequest, len(p.seen))
	for i, r := range p.seen {
		out[i] = *r
	}
	return out
}

// requestsTo returns the recorded requests with method and path.
func (p *faultProxy) requestsTo(method, path string) []proxiedRequest {
	var out []proxiedRequest
	for _, r := range p.requests() {
		if r.Method == method && r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// update changes a recorded request under the lock.
func (p *faultProxy) update(rec *proxiedRequest, f func(*proxiedRequest)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(rec)
}

func (p *faultProxy) serve(w http.ResponseWriter, r *http.Request) {
	// The body is read whole first, so that what was received is recorded
	// before any answer reaches the client and the test reads it.
	body, err := io.ReadAll(r.Body)
	if err != nil {
		// The client went away mid-request; nothing reaches the server.
		p.t.Logf("fault proxy: %s %s: reading request body: %v", r.Method, r.URL.Path, err)
		return
	}
	sum := sha256.Sum256(body)

	p.mu.Lock()
	id := r.Method + " " + r.URL.Path
	p.counts[id]++
	n := p.counts[id]
	f := proxyFault{action: actForward}
	for _, rule := range p.rules {
		if rule.method == r.Method && rule.path == r.URL.Path && (rule.attempt == 0 || rule.attempt == n) {
			f = rule.fault
			break
		}
	}
	rec := &proxiedRequest{
		Method: r.Method, Path: r.URL.Path, Key: r.Header.Get("Idempotency-Key"), Attempt: n,
		Action: f.action, BodyLen: len(body), BodySHA256: hex.EncodeToString(sum[:]), Chunked: r.ContentLength < 0,
	}
	p.seen = append(p.seen, rec)
	requestNo := len(p.seen)
	p.mu.Unlock()

	switch f.action {
	case actAnswer:
		w.Header().Set("X-Request-Id", fmt.Sprintf("proxy-%d", requestNo))
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(f.status)
		json.NewEncoder(w).Encode(map[string]any{
			"type":      "about:blank",
			"title":     http.StatusText(f.status),
			"status":    f.status,
			"code":      f.code,
			"detail":    fmt.Sprintf("injected by the fault proxy: %s %s attempt %d", r.Method, r.URL.Path, n),
			"requestId": fmt.Sprintf("proxy-%d", requestNo),
		})
		return
	case actDelay:
		if !proxyWait(r.Context(), f.delay) {
			return // the client gave up: the request never reaches the server
		}
	}

	resp, respBody, err := p.forward(r, body)
	if err != nil {
		p.t.Errorf("fault proxy: forwarding %s %s: %v", r.Method, r.URL.Path, err)
		hijackAndClose(p.t, w)
		return
	}
	p.update(rec, func(rec *proxiedRequest) {
		rec.Forwarded = true
		rec.Status = resp.StatusCode
		rec.Replayed = resp.Header.Get("Idempotent-Replayed") == "true"
	})

	switch f.action {
	case actCutAfterAnswer:
		hijackAndClose(p.t, w)
		return
	case actHoldAnswer:
		if !proxyWait(r.Context(), f.delay) {
			return // the client gave up waiting; the answer is lost
		}
	}
	for k, vs := range resp.Header {
		if hopByHop[http.CanonicalHeaderKey(k)] {
			continue
		}
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(respBody)
}

// forward sends r, with body, to the server and reads the whole answer. It is
// detached from the client: once forwarded, a request runs to completion on
// the server even if its client hangs up, as it would behind a real proxy.
func (p *faultProxy) forward(r *http.Request, body []byte) (*http.Response, []byte, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 30*time.Second)
	defer cancel()
	var rd io.Reader = http.NoBody
	if len(body) > 0 {
		rd = bytes.NewReader(body)
	}
	out, err := http.NewRequestWithContext(ctx, r.Method, p.target+r.URL.RequestURI(), rd)
	if err != nil {
		return nil, nil, err
	}
	if r.ContentLength < 0 && len(body) > 0 {
		// Keep the client's framing: a chunked body goes on chunked.
		out.ContentLength, out.GetBody = -1, nil
	}
	for k, vs := range r.Header {
		if hopByHop[http.CanonicalHeaderKey(k)] {
			continue
		}
		out.Header[k] = append([]string(nil), vs...)
	}
	resp, err := p.outbound.Do(out)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	return resp, b, nil
}

// hopByHop are the headers a proxy must not pass on (RFC 9110 section 7.6.1),
// plus Content-Length, which net/http recomputes.
var hopByHop = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true, "Proxy-Authorization": true,
	"Proxy-Connection": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
	"Content-Length": true,
}

// proxyWait waits d and reports true, or reports false as soon as ctx ends.
func proxyWait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// hijackAndClose takes the connection over and closes it without writing: the
// client sees its connection drop after sending the whole request.
func hijackAndClose(t testing.TB, w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("fault proxy: hijack: %v", err)
		return
	}
	conn.Close()
}
