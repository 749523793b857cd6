package riskapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	riskapi "github.com/riskapi/riskapi/sdk"
)

// fakeClock stands in for time in the client: Sleep records the wait and
// moves Now forward by it, so retry tests see time pass without waiting.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	return nil
}

func (c *fakeClock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// newTestClient returns a fake server and a client of it whose clock is fake.
func newTestClient(t *testing.T, opts ...riskapi.Option) (*riskapi.Client, *fakeServer, *fakeClock) {
	t.Helper()
	srv := newFakeServer()
	t.Cleanup(srv.Close)
	clock := &fakeClock{now: fixedTime}
	all := append([]riskapi.Option{
		riskapi.WithBaseURL(srv.URL),
		riskapi.WithSleep(clock.Sleep),
		riskapi.WithClock(clock.Now),
		riskapi.WithLogger(slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))),
	}, opts...)
	c, err := riskapi.NewClient(testAPIKey, all...)
	if err != nil {
		t.Fatal(err)
	}
	return c, srv, clock
}

// tWriter sends the client's log to the test log, shown on failure.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func createParams() *riskapi.RiskCreateParams {
	return &riskapi.RiskCreateParams{Title: "Vendor contract missing a DPA", Likelihood: riskapi.Ptr(3), Impact: riskapi.Ptr(4)}
}

func keysOf(reqs []recorded) []string {
	var keys []string
	for _, r := range reqs {
		keys = append(keys, r.Key)
	}
	return keys
}

func TestCreateReusesOneKeyAcrossRetries(t *testing.T) {
	c, srv, clock := newTestClient(t)
	srv.inject(status(503, "STORE_UNAVAILABLE", "1"), status(409, "IDEMPOTENCY_REQUEST_IN_PROGRESS", "1"))

	r, err := c.Risks.Create(context.Background(), createParams())
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.recorded()
	if len(reqs) != 3 {
		t.Fatalf("server saw %d requests, want 3", len(reqs))
	}
	key := reqs[0].Key
	if want, got := []string{key, key, key}, keysOf(reqs); !slices.Equal(got, want) {
		t.Errorf("keys differ across retries: got %v, want %v", got, want)
	}
	for _, rq := range reqs {
		if rq.KeyHeaders != 1 {
			t.Errorf("request carried %d Idempotency-Key headers, want 1", rq.KeyHeaders)
		}
		if !bytes.Equal(rq.Body, reqs[0].Body) {
			t.Errorf("retry body %q differs from first %q", rq.Body, reqs[0].Body)
		}
	}
	u, err := uuid.Parse(key)
	if err != nil || u.Version() != 4 {
		t.Errorf("key %q is not a UUID v4 (%v)", key, err)
	}
	if r.LastResponse.IdempotencyKey != key || r.LastResponse.Attempts != 3 || r.LastResponse.StatusCode != 201 {
		t.Errorf("LastResponse = %+v, want key %s, 3 attempts, 201", r.LastResponse, key)
	}
	if r.LastResponse.RequestID != "req_3" {
		t.Errorf("RequestID = %q, want req_3", r.LastResponse.RequestID)
	}
	if want, got := []time.Duration{time.Second, time.Second}, clock.Waits(); !slices.Equal(got, want) {
		t.Errorf("waits: got %v, want %v", got, want)
	}
	if r.RiskScore == nil || *r.RiskScore != 12 || r.ID == "" || r.Title != "Vendor contract missing a DPA" {
		t.Errorf("risk = %+v", r)
	}
}

func TestCallerKeyIsSentAndEachCallMintsItsOwn(t *testing.T) {
	c, srv, _ := newTestClient(t)
	ctx := context.Background()
	p := createParams()
	p.IdempotencyKey = "order-42-risk"
	if _, err := c.Risks.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Risks.Create(ctx, createParams()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Risks.Create(ctx, createParams()); err != nil {
		t.Fatal(err)
	}
	r, err := c.Risks.Get(ctx, "risk_1")
	if err != nil {
		t.Fatal(err)
	}
	keys := keysOf(srv.recorded())
	if keys[0] != "order-42-risk" {
		t.Errorf("first key = %q, want the caller's", keys[0])
	}
	if keys[1] == "" || keys[1] == keys[2] {
		t.Errorf("calls 2 and 3 sent keys %q and %q, want two distinct minted keys", keys[1], keys[2])
	}
	if keys[3] != "" {
		t.Errorf("GET sent Idempotency-Key %q, want none", keys[3])
	}
	if r.LastResponse.IdempotencyKey != "" {
		t.Errorf("GET LastResponse.IdempotencyKey = %q, want empty", r.LastResponse.IdempotencyKey)
	}
}

func TestRetryPolicyByStatus(t *testing.T) {
	tests := []struct {
		status       int
		code         string
		wantAttempts int // 2: retried once then succeeded; 1: returned at once
	}{
		{409, "IDEMPOTENCY_REQUEST_IN_PROGRESS", 2},
		{429, "RATE_LIMITED", 2},
		{502, "", 2},
		{503, "STORE_UNAVAILABLE", 2},
		{504, "", 2},
		{400, "VALIDATION_FAILED", 1},
		{401, "UNAUTHENTICATED", 1},
		{403, "FORBIDDEN", 1},
		{404, "NOT_FOUND", 1},
		{413, "PAYLOAD_TOO_LARGE", 1},
		{422, "IDEMPOTENCY_KEY_REUSED", 1},
		{500, "INTERNAL", 1},
		{501, "", 1},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			c, srv, _ := newTestClient(t)
			srv.inject(status(tt.status, tt.code, ""))
			r, err := c.Risks.Create(context.Background(), createParams())
			if got := len(srv.recorded()); got != tt.wantAttempts {
				t.Fatalf("server saw %d attempts, want %d", got, tt.wantAttempts)
			}
			if tt.wantAttempts == 2 {
				if err != nil {
					t.Fatalf("retried call failed: %v", err)
				}
				if r.LastResponse.Attempts != 2 {
					t.Errorf("Attempts = %d, want 2", r.LastResponse.Attempts)
				}
				return
			}
			var apiErr *riskapi.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v (%T), want *riskapi.Error", err, err)
			}
			if apiErr.Status != tt.status || apiErr.Code != tt.code || apiErr.RequestID != "req_1" {
				t.Errorf("Error = %+v, want status %d code %q request req_1", apiErr, tt.status, tt.code)
			}
			if srv.riskCount() != 0 {
				t.Errorf("a risk was created")
			}
		})
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter func(now time.Time) string
		maxWait    time.Duration
		want       time.Duration
	}{
		{"seconds", func(time.Time) string { return "7" }, 30 * time.Second, 7 * time.Second},
		{"http-date", func(now time.Time) string { return now.Add(12 * time.Second).Format(http.TimeFormat) }, 30 * time.Second, 12 * time.Second},
		{"capped at MaxWait", func(time.Time) string { return "120" }, 30 * time.Second, 30 * time.Second},
		{"capped at a custom MaxWait", func(time.Time) string { return "5" }, 2 * time.Second, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv, clock := newTestClient(t, riskapi.WithMaxWait(tt.maxWait))
			srv.inject(status(429, "RATE_LIMITED", tt.retryAfter(fixedTime)))
			if _, err := c.Risks.Create(context.Background(), createParams()); err != nil {
				t.Fatal(err)
			}
			if want, got := []time.Duration{tt.want}, clock.Waits(); !slices.Equal(got, want) {
				t.Errorf("waits: got %v, want %v", got, want)
			}
		})
	}
}

func TestBackoffWithoutRetryAfterIsJitteredAndCapped(t *testing.T) {
	c, srv, clock := newTestClient(t, riskapi.WithMaxWait(3*time.Second), riskapi.WithMaxRetries(6))
	for range 6 {
		srv.inject(status(502, "", ""))
	}
	if _, err := c.Risks.Create(context.Background(), createParams()); err != nil {
		t.Fatal(err)
	}
	waits := clock.Waits()
	if len(waits) != 6 {
		t.Fatalf("waits = %v, want 6", waits)
	}
	for i, w := range waits {
		ceiling := min(500*time.Millisecond<<i, 3*time.Second)
		if w < 0 || w >= ceiling {
			t.Errorf("wait %d = %v, want within [0, %v)", i, w, ceiling)
		}
	}
}

func TestMaxRetriesEndsWithLastError(t *testing.T) {
	c, srv, _ := newTestClient(t, riskapi.WithMaxRetries(2))
	srv.inject(status(503, "STORE_UNAVAILABLE", "1"), status(429, "RATE_LIMITED", "1"), status(504, "", "1"), nil)
	_, err := c.Risks.Create(context.Background(), createParams())
	var apiErr *riskapi.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v, want *riskapi.Error", err)
	}
	if apiErr.Status != 504 || apiErr.RequestID != "req_3" {
		t.Errorf("got %d from %s, want the last attempt's 504 from req_3", apiErr.Status, apiErr.RequestID)
	}
	if got := len(srv.recorded()); got != 3 {
		t.Errorf("attempts = %d, want 3 (1 + MaxRetries)", got)
	}
	if apiErr.IdempotencyKey == "" || apiErr.IdempotencyKey != srv.recorded()[0].Key {
		t.Errorf("Error.IdempotencyKey = %q, want the call's key", apiErr.IdempotencyKey)
	}
}

func TestMaxElapsedEndsWithLastError(t *testing.T) {
	c, srv, clock := newTestClient(t, riskapi.WithMaxElapsed(5*time.Second), riskapi.WithMaxRetries(100))
	for range 10 {
		srv.inject(status(409, "IDEMPOTENCY_REQUEST_IN_PROGRESS", "2"))
	}
	_, err := c.Risks.Create(context.Background(), createParams())
	if !errors.Is(err, riskapi.ErrIdempotencyRequestInProgress) {
		t.Fatalf("err = %v, want IDEMPOTENCY_REQUEST_IN_PROGRESS", err)
	}
	var apiErr *riskapi.Error
	if errors.As(err, &apiErr); apiErr.RequestID != "req_3" {
		t.Errorf("error from %s, want the last attempt req_3", apiErr.RequestID)
	}
	// t=0 attempt, wait 2s, t=2 attempt, wait 2s, t=4 attempt; a third wait would end at 6s > 5s.
	if want, got := []time.Duration{2 * time.Second, 2 * time.Second}, clock.Waits(); !slices.Equal(got, want) {
		t.Errorf("waits: got %v, want %v", got, want)
	}
}

func TestConnectionCutAfterServerAnsweredIsRetriedWithSameKey(t *testing.T) {
	for _, tt := range []struct {
		name  string
		fault fault
	}{
		{"before the status line", cutAfterAnswer()},
		{"in the middle of the body", cutMidBody()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, srv, _ := newTestClient(t)
			srv.inject(tt.fault)
			r, err := c.Risks.Create(context.Background(), createParams())
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.recorded()
			if len(reqs) != 2 || reqs[0].Key == "" || reqs[0].Key != reqs[1].Key {
				t.Fatalf("requests %d with keys %q, want 2 with one key", len(reqs), keysOf(reqs))
			}
			if !r.LastResponse.IdempotentReplayed {
				t.Errorf("second attempt was not a replay: %+v", r.LastResponse)
			}
			if n := srv.riskCount(); n != 1 || r.ID != "risk_1" {
				t.Errorf("%d risks exist, returned %s; want exactly risk_1", n, r.ID)
			}
		})
	}
}

func TestNetworkErrorsExhaustedAreWrapped(t *testing.T) {
	c, srv, _ := newTestClient(t, riskapi.WithMaxRetries(2))
	srv.inject(cutAfterAnswer(), cutAfterAnswer(), cutAfterAnswer())
	_, err := c.Risks.Create(context.Background(), createParams())
	if err == nil {
		t.Fatal("want an error")
	}
	var apiErr *riskapi.Error
	if errors.As(err, &apiErr) {
		t.Errorf("network failure came back as *Error: %v", err)
	}
	if !strings.Contains(err.Error(), "giving up after 3 attempts") {
		t.Errorf("err = %v, want it to say it gave up after 3 attempts", err)
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("err = %v, want it to wrap the EOF", err)
	}
}

func TestContextCancelStopsWaitAtOnce(t *testing.T) {
	srv := newFakeServer()
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The server asks for a 30 s wait and the call is cancelled during it.
	srv.inject(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		w.Header().Set("Retry-After", "30")
		writeProblem(w, 503, "STORE_UNAVAILABLE", "down")
		go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	})
	// The real sleep: the point is that cancellation cuts it short.
	c, err := riskapi.NewClient(testAPIKey, riskapi.WithBaseURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.Risks.Create(ctx, createParams())
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("call returned after %v, want at once", elapsed)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if !errors.Is(err, riskapi.ErrStoreUnavailable) {
		t.Errorf("err = %v, want it to carry the last attempt's error", err)
	}
	if n := len(srv.recorded()); n != 1 {
		t.Errorf("attempts = %d, want 1", n)
	}
}

func TestContextCancelStopsAttemptInFlight(t *testing.T) {
	c, srv, clock := newTestClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv.inject(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		cancel()
		<-r.Context().Done() // hold the request until the client gives up
	})
	start := time.Now()
	_, err := c.Risks.Create(ctx, createParams())
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("call returned after %v, want at once", elapsed)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if len(clock.Waits()) != 0 || len(srv.recorded()) != 1 {
		t.Errorf("waited %v over %d attempts, want no wait and 1 attempt", clock.Waits(), len(srv.recorded()))
	}
}

func TestErrorsCarryTheProblem(t *testing.T) {
	c, srv, _ := newTestClient(t)
	ctx := context.Background()

	_, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{})
	var apiErr *riskapi.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v, want *riskapi.Error", err)
	}
	want := &riskapi.Error{
		Status: 400, Code: "VALIDATION_FAILED", Type: "https://riskapi.dev/problems/validation-failed",
		Title: "Bad Request", Detail: "title: is required", RequestID: "req_1",
		Errors:         []riskapi.FieldError{{Field: "title", Detail: "is required"}},
		IdempotencyKey: srv.recorded()[0].Key,
	}
	got := *apiErr
	got.Body = nil // the raw body is checked elsewhere; here, what was read from it
	if !reflect.DeepEqual(&got, want) {
		t.Errorf("error:\n got %+v\nwant %+v", got, *want)
	}
	if !errors.Is(err, riskapi.ErrValidationFailed) || errors.Is(err, riskapi.ErrNotFound) {
		t.Errorf("errors.Is does not match by code")
	}
	if !errors.Is(err, &riskapi.Error{Status: 400}) {
		t.Errorf("errors.Is does not match by status")
	}
	if got := err.Error(); got != "riskapi: 400 VALIDATION_FAILED: title: is required (request req_1)" {
		t.Errorf("Error() = %q", got)
	}

	_, err = c.Risks.Get(ctx, "risk_missing")
	if !errors.Is(err, riskapi.ErrNotFound) {
		t.Errorf("Get of a missing risk: %v, want ErrNotFound", err)
	}
}

func TestErrorWithoutProblemBody(t *testing.T) {
	c, srv, _ := newTestClient(t)
	huge := strings.Repeat("<html>bad gateway</html>\n", 100_000) // 2.5 MB
	srv.inject(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, huge)
	})
	_, err := c.Risks.Get(context.Background(), "risk_1")
	var apiErr *riskapi.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v, want *riskapi.Error", err)
	}
	if apiErr.Status != 400 || apiErr.Code != "" || apiErr.Title != "Bad Request" || apiErr.RequestID != "req_1" {
		t.Errorf("Error = %+v", apiErr)
	}
	if len(apiErr.Body) != 64<<10 {
		t.Errorf("read %d bytes of the error body, want the 64 KiB cap", len(apiErr.Body))
	}
	if !strings.HasPrefix(apiErr.Detail, "<html>bad gateway</html> <html>") || len(apiErr.Detail) > 300 {
		t.Errorf("Detail = %q, want a short snippet of the body", apiErr.Detail)
	}
}

func TestUpdateSendsOnlySetFields(t *testing.T) {
	c, srv, _ := newTestClient(t)
	ctx := context.Background()
	if _, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{Title: "t", Owner: &riskapi.RiskOwnerParams{Name: riskapi.Ptr("alice")}, Likelihood: riskapi.Ptr(2), Impact: riskapi.Ptr(5)}); err != nil {
		t.Fatal(err)
	}
	r, err := c.Risks.Update(ctx, "risk_1", &riskapi.RiskUpdateParams{
		Status: riskapi.Ptr(riskapi.RiskStatusMitigated), Description: riskapi.Ptr(""), ClearImpact: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	req := srv.recorded()[1]
	var sent map[string]any
	if err := json.Unmarshal(req.Body, &sent); err != nil {
		t.Fatal(err)
	}
	if want := (map[string]any{"status": "mitigated", "description": "", "impact": nil}); !reflect.DeepEqual(sent, want) {
		t.Errorf("PATCH body: got %#v, want %#v", sent, want)
	}
	if req.Method != http.MethodPatch || req.Key == "" {
		t.Errorf("sent %s with key %q, want PATCH with a key", req.Method, req.Key)
	}
	if r.Owner.Name != "alice" || r.Owner.UserID != nil || r.Status != riskapi.RiskStatusMitigated || r.Impact != nil || *r.Likelihood != 2 {
		t.Errorf("updated risk = %+v", r)
	}

	_, err = c.Risks.Update(ctx, "risk_1", &riskapi.RiskUpdateParams{Impact: riskapi.Ptr(1), ClearImpact: true})
	if err == nil || !strings.Contains(err.Error(), "both Impact and ClearImpact") {
		t.Errorf("set and clear together: err = %v", err)
	}
}

func TestReplaceAndDelete(t *testing.T) {
	c, srv, _ := newTestClient(t)
	ctx := context.Background()
	if _, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{Title: "old", Owner: &riskapi.RiskOwnerParams{UserID: riskapi.Ptr("usr_1")}}); err != nil {
		t.Fatal(err)
	}
	r, err := c.Risks.Replace(ctx, "risk_1", &riskapi.RiskReplaceParams{Title: "new", Category: "legal"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Title != "new" || r.Owner.Name != "" || r.Owner.UserID != nil || r.Category != "legal" {
		t.Errorf("replaced risk = %+v, want owner gone", r)
	}
	if m := srv.recorded()[1].Method; m != http.MethodPut {
		t.Errorf("Replace sent %s", m)
	}

	// Delete whose 204 is lost: the retry gets the stored 204, not a 404.
	srv.inject(cutAfterAnswer())
	info, err := c.Risks.DeleteWithParams(ctx, "risk_1", &riskapi.RiskDeleteParams{Params: riskapi.Params{IdempotencyKey: "delete-risk-1"}})
	if err != nil {
		t.Fatal(err)
	}
	// Attempts may be 1: for a request without a body, net/http itself
	// resends once on a reused connection found closed (same key).
	if info.StatusCode != 204 || !info.IdempotentReplayed || info.IdempotencyKey != "delete-risk-1" {
		t.Errorf("delete response = %+v", info)
	}
	if err := c.Risks.Delete(ctx, "risk_1"); !errors.Is(err, riskapi.ErrNotFound) {
		t.Errorf("second delete with a new key: %v, want NOT_FOUND", err)
	}
	if err := c.Risks.Delete(ctx, ""); err == nil {
		t.Error("empty id accepted")
	}
}

func TestListIteratesAcrossPages(t *testing.T) {
	c, srv, _ := newTestClient(t)
	ctx := context.Background()
	for _, title := range []string{"a", "b", "c", "d", "e"} {
		if _, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{Title: title}); err != nil {
			t.Fatal(err)
		}
	}
	before := len(srv.recorded())

	var titles []string
	for r, err := range c.Risks.List(ctx, &riskapi.RiskListParams{Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		titles = append(titles, r.Title)
	}
	if want, got := []string{"a", "b", "c", "d", "e"}, titles; !slices.Equal(got, want) {
		t.Errorf("titles: got %v, want %v", got, want)
	}
	var queries []string
	for _, r := range srv.recorded()[before:] {
		queries = append(queries, r.RawQuery)
	}
	if want, got := []string{"limit=2", "cursor=cur_2&limit=2", "cursor=cur_4&limit=2"}, queries; !slices.Equal(got, want) {
		t.Errorf("page requests: got %v, want %v", got, want)
	}

	// Breaking out of the loop stops paging.
	before = len(srv.recorded())
	for range c.Risks.List(ctx, &riskapi.RiskListParams{Limit: 2}) {
		break
	}
	if n := len(srv.recorded()) - before; n != 1 {
		t.Errorf("early break made %d requests, want 1", n)
	}

	// An error on a later page ends the sequence after the earlier items.
	srv.inject(nil, status(500, "INTERNAL", ""))
	got, err := riskapi.Collect(c.Risks.List(ctx, &riskapi.RiskListParams{Limit: 2}))
	if len(got) != 2 || !errors.Is(err, riskapi.ErrInternal) {
		t.Errorf("got %d risks and %v, want 2 and INTERNAL", len(got), err)
	}

	// Resuming from a cursor.
	page, err := c.Risks.ListPage(ctx, &riskapi.RiskListParams{Limit: 3})
	if err != nil || len(page.Data) != 3 || !page.HasMore || page.NextCursor != "cur_3" {
		t.Fatalf("page = %+v, %v", page, err)
	}
	rest, err := riskapi.Collect(c.Risks.List(ctx, &riskapi.RiskListParams{Cursor: page.NextCursor}))
	if err != nil || len(rest) != 2 || rest[0].Title != "d" || rest[0].LastResponse == nil {
		t.Errorf("resumed list = %v, %v", rest, err)
	}
}

// patternReaderAt is a large file that exists nowhere in memory: byte i is
// i mod 251. It records the largest single read, to show the upload streams.
type patternReaderAt struct {
	size    int64
	mu      sync.Mutex
	maxRead int
	reads   int64 // bytes handed out, over all attempts
}

func (p *patternReaderAt) ReadAt(b []byte, off int64) (int, error) {
	p.mu.Lock()
	p.maxRead = max(p.maxRead, len(b))
	p.mu.Unlock()
	if off >= p.size {
		return 0, io.EOF
	}
	n := min(int64(len(b)), p.size-off)
	for i := range n {
		b[i] = byte((off + i) % 251)
	}
	p.mu.Lock()
	p.reads += n
	p.mu.Unlock()
	if n < int64(len(b)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

func TestUploadRereadsBodyOnRetry(t *testing.T) {
	c, srv, _ := newTestClient(t)
	ctx := context.Background()
	if _, err := c.Risks.Create(ctx, createParams()); err != nil {
		t.Fatal(err)
	}
	content := "%PDF-1.7 pretend this is the vendor's DPA\n"
	srv.inject(status(503, "STORE_UNAVAILABLE", "1"))
	a, err := c.Attachments.Upload(ctx, "risk_1", &riskapi.AttachmentUploadParams{
		File: strings.NewReader(content), Filename: `dpa "draft".pdf`, ContentType: "application/pdf",
		Description: "Email to the vendor",
	})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.recorded()[1:]
	if len(reqs) != 2 {
		t.Fatalf("upload took %d requests, want 2", len(reqs))
	}
	if !bytes.Equal(reqs[0].Body, reqs[1].Body) || len(reqs[0].Body) == 0 {
		t.Errorf("the retry sent different bytes:\n%q\n%q", reqs[0].Body, reqs[1].Body)
	}
	if reqs[0].Key == "" || reqs[0].Key != reqs[1].Key {
		t.Errorf("keys %q, want one key", keysOf(reqs))
	}
	if cl := reqs[0].ContentLength; cl != int64(len(reqs[0].Body)) {
		t.Errorf("Content-Length = %d, want the exact body length %d", cl, len(reqs[0].Body))
	}
	// The body is a well-formed form with the file and the description.
	_, params, err := mime.ParseMediaType(reqs[1].Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	form, err := multipart.NewReader(bytes.NewReader(reqs[1].Body), params["boundary"]).ReadForm(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if got := form.Value["description"]; len(got) != 1 || got[0] != "Email to the vendor" {
		t.Errorf("description = %q", got)
	}
	fh := form.File["file"][0]
	if fh.Filename != `dpa "draft".pdf` || fh.Header.Get("Content-Type") != "application/pdf" || fh.Size != int64(len(content)) {
		t.Errorf("file part = %q %q %d", fh.Filename, fh.Header.Get("Content-Type"), fh.Size)
	}
	if a.Size != int64(len(content)) || a.Filename != `dpa "draft".pdf` || a.RiskID != "risk_1" || a.LastResponse.Attempts != 2 {
		t.Errorf("attachment = %+v", a)
	}
}

func TestUploadStreamsLargeFileAndSurvivesACut(t *testing.T) {
	c, srv, _ := newTestClient(t)
	ctx := context.Background()
	if _, err := c.Risks.Create(ctx, createParams()); err != nil {
		t.Fatal(err)
	}
	file := &patternReaderAt{size: 8 << 20}
	srv.inject(cutAfterAnswer())
	a, err := c.Attachments.Upload(ctx, "risk_1", &riskapi.AttachmentUploadParams{
		File: file, Size: file.size, Filename: "scan.bin",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !a.LastResponse.IdempotentReplayed || srv.attachmentCount() != 1 {
		t.Errorf("replayed=%v, %d attachments; want a replay and exactly one", a.LastResponse.IdempotentReplayed, srv.attachmentCount())
	}
	if file.reads != 2*file.size {
		t.Errorf("source read %d bytes, want the whole file twice (%d)", file.reads, 2*file.size)
	}
	if file.maxRead > 64<<10 {
		t.Errorf("largest read was %d bytes: the file was buffered, not streamed", file.maxRead)
	}
	reqs := srv.recorded()[1:]
	if !bytes.Equal(reqs[0].Body, reqs[1].Body) {
		t.Error("the retry sent different bytes")
	}
	if a.ContentType != "application/octet-stream" || a.Size != file.size {
		t.Errorf("attachment = %+v", a)
	}

	// Download and compare.
	dl, err := c.Attachments.Download(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer dl.Close()
	got, err := io.ReadAll(dl)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, file.size)
	file.ReadAt(want, 0)
	if !bytes.Equal(got, want) || dl.ContentLength != file.size || dl.ContentType != "application/octet-stream" {
		t.Errorf("download: %d bytes (equal=%v), length %d, type %q", len(got), bytes.Equal(got, want), dl.ContentLength, dl.ContentType)
	}
}

func TestUploadWithOpenReopensPerAttempt(t *testing.T) {
	c, srv, _ := newTestClient(t)
	ctx := context.Background()
	if _, err := c.Risks.Create(ctx, createParams()); err != nil {
		t.Fatal(err)
	}
	var opened, closed int
	srv.inject(status(502, "", ""))
	a, err := c.Attachments.Upload(ctx, "risk_1", &riskapi.AttachmentUploadParams{
		Open: func() (io.ReadCloser, error) {
			opened++
			return closeCounter{strings.NewReader("hello"), &closed}, nil
		},
		Filename: "hello.txt", ContentType: "text/plain",
	})
	if err != nil {
		t.Fatal(err)
	}
	if opened != 2 || closed != 2 || a.Size != 5 {
		t.Errorf("opened %d, closed %d, size %d; want 2, 2, 5", opened, closed, a.Size)
	}
	attachments, err := riskapi.Collect(c.Attachments.List(ctx, "risk_1"))
	if err != nil || len(attachments) != 1 || attachments[0].ID != a.ID {
		t.Errorf("list = %v, %v", attachments, err)
	}
	_ = srv
}

type closeCounter struct {
	io.Reader
	n *int
}

func (c closeCounter) Close() error { *c.n++; return nil }

// shortReaderAt claims more bytes than it has.
type shortReaderAt struct{ data string }

func (s shortReaderAt) ReadAt(b []byte, off int64) (int, error) {
	return strings.NewReader(s.data).ReadAt(b, off)
}

func TestUploadSourceErrorsAreNotRetried(t *testing.T) {
	c, srv, _ := newTestClient(t)
	ctx := context.Background()
	if _, err := c.Risks.Create(ctx, createParams()); err != nil {
		t.Fatal(err)
	}
	before := len(srv.recorded())
	_, err := c.Attachments.Upload(ctx, "risk_1", &riskapi.AttachmentUploadParams{
		File: shortReaderAt{"only this"}, Size: 1000, Filename: "short.txt",
	})
	if err == nil || !strings.Contains(err.Error(), "upload source") {
		t.Errorf("err = %v, want an upload source error", err)
	}
	// The fake server records a request once its body has ended, which for this
	// one may be after Upload returned: wait for it, so that it is not counted
	// against the cases below.
	for deadline := time.Now().Add(5 * time.Second); len(srv.recorded()) == before && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(srv.recorded()) - before; n > 1 {
		t.Errorf("a broken source was retried: %d requests", n)
	}

	boom := errors.New("disk on fire")
	_, err = c.Attachments.Upload(ctx, "risk_1", &riskapi.AttachmentUploadParams{
		Open: func() (io.ReadCloser, error) { return nil, boom }, Filename: "x",
	})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want it to wrap the Open error", err)
	}

	for name, p := range map[string]*riskapi.AttachmentUploadParams{
		"nil":           nil,
		"no source":     {Filename: "x"},
		"both sources":  {File: strings.NewReader("a"), Open: func() (io.ReadCloser, error) { return nil, nil }, Filename: "x"},
		"no filename":   {File: strings.NewReader("a")},
		"negative size": {File: strings.NewReader("a"), Size: -1, Filename: "x"},
		"header break":  {File: strings.NewReader("a"), Filename: "x\r\nX-Evil: 1"},
	} {
		before := len(srv.recorded())
		if _, err := c.Attachments.Upload(ctx, "risk_1", p); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if len(srv.recorded()) != before {
			t.Errorf("%s: a request was sent", name)
		}
	}
}

func TestRequestHeaders(t *testing.T) {
	c, srv, _ := newTestClient(t, riskapi.WithUserAgent("acme-grc/2.0"))
	p := createParams()
	p.Headers = http.Header{"X-Trace": {"abc"}, "Authorization": {"Bearer stolen"}, "Idempotency-Key": {"nope-nope"}}
	if _, err := c.Risks.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	h := srv.recorded()[0].Header
	if h.Get("X-Trace") != "abc" || h.Get("Authorization") != "Bearer "+testAPIKey || h.Get("Idempotency-Key") == "nope-nope" {
		t.Errorf("headers = %v", h)
	}
	if ua := h.Get("User-Agent"); !strings.HasPrefix(ua, "acme-grc/2.0 riskapi-go/") {
		t.Errorf("User-Agent = %q", ua)
	}
	if ct := h.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
}

func TestUnauthenticated(t *testing.T) {
	srv := newFakeServer()
	defer srv.Close()
	c, err := riskapi.NewClient("rk_wrong", riskapi.WithBaseURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Risks.Get(context.Background(), "risk_1")
	if !errors.Is(err, riskapi.ErrUnauthenticated) {
		t.Errorf("err = %v, want UNAUTHENTICATED", err)
	}
}

func TestNewClientValidatesOptions(t *testing.T) {
	tests := []struct {
		name   string
		key    string
		option riskapi.Option
	}{
		{"empty key", "", nil},
		{"key with newline", "rk_a\nb", nil},
		{"relative base URL", "rk_a", riskapi.WithBaseURL("/v2")},
		{"ftp base URL", "rk_a", riskapi.WithBaseURL("ftp://example.com")},
		{"base URL with query", "rk_a", riskapi.WithBaseURL("http://example.com/?a=1")},
		{"unparsable base URL", "rk_a", riskapi.WithBaseURL("http://[::1")},
		{"nil HTTP client", "rk_a", riskapi.WithHTTPClient(nil)},
		{"negative retries", "rk_a", riskapi.WithMaxRetries(-1)},
		{"zero max wait", "rk_a", riskapi.WithMaxWait(0)},
		{"negative max elapsed", "rk_a", riskapi.WithMaxElapsed(-time.Second)},
		{"nil logger", "rk_a", riskapi.WithLogger(nil)},
		{"nil sleep", "rk_a", riskapi.WithSleep(nil)},
		{"nil clock", "rk_a", riskapi.WithClock(nil)},
		{"empty user agent", "rk_a", riskapi.WithUserAgent(" ")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if c, err := riskapi.NewClient(tt.key, tt.option); err == nil || c != nil {
				t.Errorf("NewClient = %v, %v; want an error", c, err)
			}
		})
	}
	c, err := riskapi.NewClient("rk_a", riskapi.WithBaseURL("https://example.com/riskapi/"),
		riskapi.WithHTTPClient(&http.Client{}), riskapi.WithMaxRetries(0),
		riskapi.WithMaxWait(time.Second), riskapi.WithMaxElapsed(time.Minute))
	if err != nil || c.Risks == nil || c.Attachments == nil {
		t.Errorf("valid options: %v, %v", c, err)
	}
}

func TestBaseURLPathPrefix(t *testing.T) {
	srv := newFakeServer()
	defer srv.Close()
	c, err := riskapi.NewClient(testAPIKey, riskapi.WithBaseURL(srv.URL+"/prefix/"), riskapi.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	c.Risks.Get(context.Background(), "risk/1 x")
	// The id is one path segment: its slash stays escaped on the wire.
	if got := srv.recorded()[0].EscapedPath; got != "/prefix/v2/risks/risk%2F1%20x" {
		t.Errorf("path = %q", got)
	}
}

// plainReaderAt hides the Size method of its reader: the SDK cannot know the
// length and must read to EOF.
type plainReaderAt struct{ r *strings.Reader }

func (p plainReaderAt) ReadAt(b []byte, off int64) (int, error) { return p.r.ReadAt(b, off) }

func TestUploadSizeDiscovery(t *testing.T) {
	c, srv, _ := newTestClient(t)
	ctx := context.Background()
	if _, err := c.Risks.Create(ctx, createParams()); err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/evidence.txt"
	if err := os.WriteFile(path, []byte("from disk"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	tests := []struct {
		name       string
		file       io.ReaderAt
		wantSize   int64
		wantLength bool // a Content-Length was sent
	}{
		{"*os.File via Stat", f, 9, true},
		{"unknown length read to EOF", plainReaderAt{strings.NewReader("no size known")}, 13, false},
		{"empty *bytes.Reader", bytes.NewReader(nil), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.inject(status(503, "STORE_UNAVAILABLE", "1")) // and the source is read twice
			a, err := c.Attachments.Upload(ctx, "risk_1", &riskapi.AttachmentUploadParams{File: tt.file, Filename: "f"})
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.recorded()
			last := reqs[len(reqs)-1]
			if a.Size != tt.wantSize || !bytes.Equal(last.Body, reqs[len(reqs)-2].Body) {
				t.Errorf("size %d, want %d; bodies equal: %v", a.Size, tt.wantSize, bytes.Equal(last.Body, reqs[len(reqs)-2].Body))
			}
			if got := last.ContentLength >= 0; got != tt.wantLength {
				t.Errorf("Content-Length %d, want known=%v", last.ContentLength, tt.wantLength)
			}
		})
	}
}

func TestInvalidHeaderFailsWithoutRetrying(t *testing.T) {
	c, srv, _ := newTestClient(t)
	p := createParams()
	p.Headers = http.Header{"X-Note": {"line\r\nX-Evil: 1"}}
	if _, err := c.Risks.Create(context.Background(), p); err == nil || !strings.Contains(err.Error(), "invalid value for header X-Note") {
		t.Errorf("err = %v", err)
	}
	if n := len(srv.recorded()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	c, srv, _ := newTestClient(t)
	srv.inject(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		http.Redirect(w, r, "/v2/risks", http.StatusFound)
	})
	_, err := c.Risks.Create(context.Background(), createParams())
	var apiErr *riskapi.Error
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusFound {
		t.Errorf("err = %v, want a 302 *Error", err)
	}
	if n := len(srv.recorded()); n != 1 || srv.riskCount() != 0 {
		t.Errorf("%d requests, %d risks; want the redirect not followed", n, srv.riskCount())
	}
}

// TestStoreUnavailableOutcome: a 503 whose write may have committed (outcome
// "unknown") is retried with the same key, and the retry's replay is the call's
// result: one risk, never two. When retries run out, Error.Outcome tells the
// caller which 503 it was.
func TestStoreUnavailableOutcome(t *testing.T) {
	c, srv, _ := newTestClient(t)
	srv.inject(lostCommit(riskapi.OutcomeUnknown))
	r, err := c.Risks.Create(context.Background(), createParams())
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.recorded()
	if len(reqs) != 2 || reqs[0].Key != reqs[1].Key {
		t.Fatalf("server saw %d requests with keys %v, want 2 with one key", len(reqs), keysOf(reqs))
	}
	if !r.LastResponse.IdempotentReplayed {
		t.Errorf("the retry was not a replay: %+v", r.LastResponse)
	}
	list, err := riskapi.Collect(c.Risks.List(context.Background(), nil))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(list); n != 1 {
		t.Errorf("%d risks after one call whose first answer was lost, want 1", n)
	}

	c, srv, _ = newTestClient(t, riskapi.WithMaxRetries(0))
	srv.inject(lostCommit(riskapi.OutcomeUnknown))
	_, err = c.Risks.Create(context.Background(), createParams())
	var apiErr *riskapi.Error
	if !errors.As(err, &apiErr) || !errors.Is(err, riskapi.ErrStoreUnavailable) || apiErr.Outcome != riskapi.OutcomeUnknown {
		t.Fatalf("err = %v, want STORE_UNAVAILABLE with Outcome unknown", err)
	}
	if apiErr.IdempotencyKey == "" {
		t.Errorf("the error does not carry the key to retry with")
	}
}

// TestOwnerNewestShape: the SDK is written for the newest API version, so it
// names it on every request and sends and reads owner as an object — a user
// owner by id, a name owner by name (docs/api-versions.md, 2027-01-15).
func TestOwnerNewestShape(t *testing.T) {
	c, srv, _ := newTestClient(t)
	ctx := context.Background()
	r, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{Title: "t", Owner: &riskapi.RiskOwnerParams{UserID: riskapi.Ptr("usr_7")}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Owner == nil || r.Owner.UserID == nil || *r.Owner.UserID != "usr_7" {
		t.Errorf("owner = %+v, want the user usr_7", r.Owner)
	}
	if _, err := c.Risks.Update(ctx, r.ID, &riskapi.RiskUpdateParams{Owner: &riskapi.RiskOwnerParams{Name: riskapi.Ptr("Security team")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Risks.ListPage(ctx, &riskapi.RiskListParams{RiskFilter: riskapi.RiskFilter{OwnerID: riskapi.Ptr("usr_7")}}); err != nil {
		t.Fatal(err)
	}
	rec := srv.recorded()
	for _, q := range rec {
		if v := q.Header.Values("Riskapi-Version"); len(v) != 1 || v[0] != "2027-01-15" {
			t.Errorf("%s %s sent Riskapi-Version %q, want 2027-01-15 once", q.Method, q.Path, v)
		}
	}
	var created, patched map[string]any
	json.Unmarshal(rec[0].Body, &created)
	json.Unmarshal(rec[1].Body, &patched)
	if want := map[string]any{"userId": "usr_7"}; !reflect.DeepEqual(created["owner"], want) {
		t.Errorf("POST owner = %#v, want %#v", created["owner"], want)
	}
	if want := map[string]any{"name": "Security team"}; !reflect.DeepEqual(patched["owner"], want) {
		t.Errorf("PATCH owner = %#v, want %#v", patched["owner"], want)
	}
	if q := rec[2].RawQuery; !strings.Contains(q, "ownerId=usr_7") {
		t.Errorf("list query = %q, want ownerId=usr_7", q)
	}
}
