package sdktest_test

// Tests of the SDK against the real riskapi server (internal/app on a fresh
// database of the store under test: SQLite, or PostgreSQL when
// TEST_DATABASE_URL is a postgres:// URL), served in-process over loopback,
// directly or through faultProxy. Unlike the fake server of client_test.go,
// here the idempotency engine, its fingerprints and its stored responses are
// the ones that ship, so these tests show that the SDK's keys and retries and
// the server's replays fit together: a lost answer never makes a second risk.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
	riskapi "github.com/riskapi/riskapi/sdk"
)

// realServer is one running riskapi with a tenant and a fault proxy in front.
type realServer struct {
	env   *apitest.Env
	srv   *httptest.Server
	acme  *apitest.Tenant
	proxy *faultProxy
}

func startReal(t *testing.T) *realServer {
	t.Helper()
	if testing.Short() {
		t.Skip("real server behind the fault proxy: skipped by -short, ./test runs it")
	}
	env := apitest.New(t)
	srv := httptest.NewServer(env.App.Echo)
	t.Cleanup(srv.Close)
	s := &realServer{env: env, srv: srv, acme: env.Tenant("Acme")}
	s.proxy = newFaultProxy(t, srv.URL)
	return s
}

// client returns an SDK client for apiKey sending to baseURL (s.srv.URL or
// s.proxy.URL), whose waits go to clock instead of really waiting.
func (s *realServer) client(t *testing.T, apiKey, baseURL string, clock *stepClock, opts ...riskapi.Option) *riskapi.Client {
	t.Helper()
	all := []riskapi.Option{
		riskapi.WithBaseURL(baseURL),
		riskapi.WithSleep(clock.Sleep),
		riskapi.WithClock(clock.Now),
		riskapi.WithLogger(slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))),
	}
	c, err := riskapi.NewClient(apiKey, append(all, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// count returns the number of rows of table (risks or attachments) of the
// Acme tenant matching the extra condition, if any, read from the database.
func (s *realServer) count(t *testing.T, table, cond string, args ...any) int64 {
	t.Helper()
	q := "SELECT count(*) FROM " + table + " WHERE tenant_id = ?"
	if cond != "" {
		q += " AND " + cond
	}
	var n int64
	if err := s.env.App.DB.WithContext(context.Background()).Raw(q, append([]any{s.acme.ID}, args...)...).Scan(&n).Error; err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// riskTitle reads a risk's title from the database.
func (s *realServer) riskTitle(t *testing.T, id string) string {
	t.Helper()
	var title string
	if err := s.env.App.DB.WithContext(context.Background()).Raw("SELECT title FROM risks WHERE id = ?", id).Scan(&title).Error; err != nil {
		t.Fatal(err)
	}
	return title
}

// seedRisk creates a risk straight through the router, not through the proxy
// or the SDK under test, and returns its id.
func (s *realServer) seedRisk(t *testing.T, title string) string {
	t.Helper()
	var r struct{ ID string }
	s.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: s.acme.Key,
		JSON: map[string]any{"title": title}}).Expect(http.StatusCreated).Decode(&r)
	return r.ID
}

// stepClock is the client's clock: Sleep records each wait and moves Now
// forward by it, so that retries, Retry-After and the MaxElapsed budget are
// observable without waiting. onSleep, if set, runs during each wait, between
// two attempts.
type stepClock struct {
	mu      sync.Mutex
	now     time.Time
	waits   []time.Duration
	onSleep func(d time.Duration)
}

func newStepClock() *stepClock {
	return &stepClock{now: time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	hook := c.onSleep
	c.mu.Unlock()
	if hook != nil {
		hook(d)
	}
	return nil
}

func (c *stepClock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.waits)
}

// testLog sends the client's debug log to the test log, shown on failure.
type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// checkOneKey fails unless reqs are at least min requests that all carry the
// same, non-empty key want, and the server ran exactly one of them: every
// other one that reached it was answered from the stored response.
func checkOneKey(t *testing.T, reqs []proxiedRequest, want string, min int) {
	t.Helper()
	if len(reqs) < min {
		t.Fatalf("proxy saw %d requests, want at least %d: %+v", len(reqs), min, reqs)
	}
	if want == "" {
		t.Fatal("the call reported no idempotency key")
	}
	executed := 0
	for i, r := range reqs {
		if r.Key != want {
			t.Errorf("request %d carried Idempotency-Key %q, want %q (the key of the call)", i+1, r.Key, want)
		}
		if r.BodySHA256 != reqs[0].BodySHA256 {
			t.Errorf("request %d sent a body different from the first (%d vs %d bytes)", i+1, r.BodyLen, reqs[0].BodyLen)
		}
		if r.Forwarded && r.Status/100 == 2 && !r.Replayed {
			executed++
		}
	}
	if executed != 1 {
		t.Errorf("the server ran %d of the requests, want exactly 1: %+v", executed, reqs)
	}
}

func checkAPIError(t *testing.T, err error, status int, code string) *riskapi.Error {
	t.Helper()
	var apiErr *riskapi.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v (%T), want *riskapi.Error %d %s", err, err, status, code)
	}
	if apiErr.Status != status || apiErr.Code != code {
		t.Fatalf("err = %d %s, want %d %s: %v", apiErr.Status, apiErr.Code, status, code, err)
	}
	if apiErr.RequestID == "" {
		t.Errorf("err.RequestID is empty: %v", err)
	}
	return apiErr
}

// (a) The answer to the first Create is lost after the server stored the
// risk: the SDK retries with the same key and gets the stored 201 back.
func TestRealCreateAnswerLostIsReplayed(t *testing.T) {
	s := startReal(t)
	clock := newStepClock()
	c := s.client(t, s.acme.Key, s.proxy.URL, clock)
	s.proxy.on(http.MethodPost, "/v2/risks", 1, pxCutAfterAnswer())

	r, err := c.Risks.Create(context.Background(), &riskapi.RiskCreateParams{
		Title: "Vendor contract missing a DPA", Likelihood: riskapi.Ptr(3), Impact: riskapi.Ptr(4),
	})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	lr := r.LastResponse
	if lr.StatusCode != http.StatusCreated || !lr.IdempotentReplayed || lr.Attempts != 2 {
		t.Errorf("LastResponse = status %d, replayed %v, attempts %d; want 201, true, 2", lr.StatusCode, lr.IdempotentReplayed, lr.Attempts)
	}
	if _, err := uuid.Parse(lr.IdempotencyKey); err != nil {
		t.Errorf("key %q is not a UUID: %v", lr.IdempotencyKey, err)
	}
	if lr.RequestID == "" {
		t.Error("LastResponse.RequestID is empty")
	}
	reqs := s.proxy.requestsTo(http.MethodPost, "/v2/risks")
	checkOneKey(t, reqs, lr.IdempotencyKey, 2)
	if reqs[0].Action != actCutAfterAnswer || !reqs[0].Forwarded || reqs[0].Status != http.StatusCreated || reqs[0].Replayed {
		t.Errorf("first request: %+v, want cut after the server created the risk", reqs[0])
	}
	if n := s.count(t, "risks", ""); n != 1 {
		t.Fatalf("%d risks in the database, want exactly 1", n)
	}
	if n := s.count(t, "risks", "id = ?", r.ID); n != 1 {
		t.Errorf("the returned id %s is not the stored risk", r.ID)
	}
	if r.Title != "Vendor contract missing a DPA" || r.RiskScore == nil || *r.RiskScore != 12 {
		t.Errorf("replayed risk = %+v, want the created one with riskScore 12", r)
	}
	if w := clock.Waits(); len(w) != 1 || w[0] < 0 || w[0] >= 500*time.Millisecond {
		t.Errorf("waits = %v, want one backoff in [0, 500ms)", w)
	}
}

// (b) The same for an upload: the retry sends the same bytes under the same
// key, and the server replays the stored attachment instead of storing a
// second one.
func TestRealUploadAnswerLostIsReplayed(t *testing.T) {
	s := startReal(t)
	data := make([]byte, 300<<10+7) // several pipe hand-offs, not a round size
	rng := rand.New(rand.NewChaCha8([32]byte{1}))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	sum := sha256.Sum256(data)
	wantSHA := hex.EncodeToString(sum[:])

	sources := []struct {
		name    string
		set     func(p *riskapi.AttachmentUploadParams)
		chunked bool
	}{
		{"File", func(p *riskapi.AttachmentUploadParams) { p.File = bytes.NewReader(data) }, false},
		{"Open", func(p *riskapi.AttachmentUploadParams) { // unknown size: sent chunked
			p.Open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
		}, true},
	}
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			riskID := s.seedRisk(t, "Upload target "+src.name)
			path := "/v2/risks/" + riskID + "/attachments"
			clock := newStepClock()
			c := s.client(t, s.acme.Key, s.proxy.URL, clock)
			s.proxy.on(http.MethodPost, path, 1, pxCutAfterAnswer())

			p := &riskapi.AttachmentUploadParams{Filename: "dpa.pdf", ContentType: "application/pdf", Description: "Signed DPA"}
			src.set(p)
			a, err := c.Attachments.Upload(context.Background(), riskID, p)
			if err != nil {
				t.Fatalf("Upload: %v", err)
			}
			lr := a.LastResponse
			if lr.StatusCode != http.StatusCreated || !lr.IdempotentReplayed || lr.Attempts != 2 {
				t.Errorf("LastResponse = status %d, replayed %v, attempts %d; want 201, true, 2", lr.StatusCode, lr.IdempotentReplayed, lr.Attempts)
			}
			reqs := s.proxy.requestsTo(http.MethodPost, path)
			checkOneKey(t, reqs, lr.IdempotencyKey, 2) // also: byte-identical bodies
			if reqs[0].BodyLen <= len(data) {
				t.Errorf("request body %d bytes, want the %d-byte file plus its multipart framing", reqs[0].BodyLen, len(data))
			}
			for i, r := range reqs {
				if r.Chunked != src.chunked {
					t.Errorf("request %d chunked = %v, want %v", i+1, r.Chunked, src.chunked)
				}
			}
			if n := s.count(t, "attachments", "risk_id = ?", riskID); n != 1 {
				t.Fatalf("%d attachment rows for the risk, want exactly 1", n)
			}
			if a.ID == "" || a.RiskID != riskID || a.Size != int64(len(data)) || a.SHA256 != wantSHA || a.Filename != "dpa.pdf" {
				t.Errorf("attachment = %+v, want %d bytes with sha256 %s on %s", a, len(data), wantSHA, riskID)
			}
			list, err := riskapi.Collect(c.Attachments.List(context.Background(), riskID))
			if err != nil || len(list) != 1 || list[0].ID != a.ID || list[0].SHA256 != wantSHA {
				t.Errorf("List = %v, %v; want just %s", list, err, a.ID)
			}
			dl, err := c.Attachments.Download(context.Background(), a.ID)
			if err != nil {
				t.Fatalf("Download: %v", err)
			}
			got, err := io.ReadAll(dl)
			dl.Close()
			if err != nil || !bytes.Equal(got, data) || dl.ContentType != "application/pdf" {
				t.Errorf("Download: %d bytes of %s, %v; want the uploaded %d bytes of application/pdf", len(got), dl.ContentType, err, len(data))
			}
		})
	}
}

// (c) PATCH and PUT whose answers are lost take effect once: another change
// made between the attempts survives, which it would not if the retry ran
// the write again.
func TestRealUpdateAnswerLostTakesEffectOnce(t *testing.T) {
	cases := []struct {
		name, method string
		call         func(c *riskapi.Client, id string) (*riskapi.Risk, error)
	}{
		{"Update", http.MethodPatch, func(c *riskapi.Client, id string) (*riskapi.Risk, error) {
			return c.Risks.Update(context.Background(), id, &riskapi.RiskUpdateParams{
				Title: riskapi.Ptr("Renamed by the SDK"), Likelihood: riskapi.Ptr(5), Impact: riskapi.Ptr(4)})
		}},
		{"Replace", http.MethodPut, func(c *riskapi.Client, id string) (*riskapi.Risk, error) {
			return c.Risks.Replace(context.Background(), id, &riskapi.RiskReplaceParams{
				Title: "Renamed by the SDK", Likelihood: riskapi.Ptr(5), Impact: riskapi.Ptr(4)})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := startReal(t)
			id := s.seedRisk(t, "Original title")
			path := "/v2/risks/" + id
			clock := newStepClock()
			clock.onSleep = func(time.Duration) {
				// Someone else renames the risk while the SDK waits to retry.
				s.env.Do(apitest.Request{Method: http.MethodPatch, Path: path, Bearer: s.acme.Key,
					JSON: map[string]any{"title": "Renamed by someone else"}}).Expect(http.StatusOK)
			}
			c := s.client(t, s.acme.Key, s.proxy.URL, clock)
			s.proxy.on(tc.method, path, 1, pxCutAfterAnswer())

			r, err := tc.call(c, id)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			lr := r.LastResponse
			if lr.StatusCode != http.StatusOK || !lr.IdempotentReplayed || lr.Attempts != 2 {
				t.Errorf("LastResponse = status %d, replayed %v, attempts %d; want 200, true, 2", lr.StatusCode, lr.IdempotentReplayed, lr.Attempts)
			}
			checkOneKey(t, s.proxy.requestsTo(tc.method, path), lr.IdempotencyKey, 2)
			if r.Title != "Renamed by the SDK" || r.RiskScore == nil || *r.RiskScore != 20 {
				t.Errorf("returned risk = %q score %v, want the stored answer: %q score 20", r.Title, r.RiskScore, "Renamed by the SDK")
			}
			if got := s.riskTitle(t, id); got != "Renamed by someone else" {
				t.Errorf("stored title = %q, want %q: the retry ran the write a second time", got, "Renamed by someone else")
			}
			if len(clock.Waits()) != 1 {
				t.Errorf("waits = %v, want 1", clock.Waits())
			}
		})
	}
}

// (c) A DELETE whose 204 is lost: the retry gets the stored 204 replayed, not
// a 404, and only that risk is gone.
func TestRealDeleteAnswerLostIsReplayed(t *testing.T) {
	s := startReal(t)
	doomed, kept, doomed2 := s.seedRisk(t, "Doomed"), s.seedRisk(t, "Kept"), s.seedRisk(t, "Doomed too")
	clock := newStepClock()
	c := s.client(t, s.acme.Key, s.proxy.URL, clock)
	path := "/v2/risks/" + doomed
	s.proxy.on(http.MethodDelete, path, 1, pxCutAfterAnswer())

	lr, err := c.Risks.DeleteWithParams(context.Background(), doomed, nil)
	if err != nil {
		t.Fatalf("DeleteWithParams: %v", err)
	}
	// The proxy's connection is fresh (the risks were made elsewhere), so
	// net/http cannot have resent the request on its own: the SDK retried.
	if lr.StatusCode != http.StatusNoContent || !lr.IdempotentReplayed || lr.Attempts != 2 {
		t.Errorf("LastResponse = status %d, replayed %v, attempts %d; want 204, true, 2", lr.StatusCode, lr.IdempotentReplayed, lr.Attempts)
	}
	checkOneKey(t, s.proxy.requestsTo(http.MethodDelete, path), lr.IdempotencyKey, 2)

	// Plain Delete: nil, not the 404 a second run would give. (On a reused
	// keep-alive connection net/http may itself resend a keyed bodiless
	// request once; the key is the same either way.)
	path2 := "/v2/risks/" + doomed2
	s.proxy.on(http.MethodDelete, path2, 1, pxCutAfterAnswer())
	if err := c.Risks.Delete(context.Background(), doomed2); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	reqs := s.proxy.requestsTo(http.MethodDelete, path2)
	if len(reqs) > 0 {
		checkOneKey(t, reqs, reqs[0].Key, 2)
	}

	if n := s.count(t, "risks", ""); n != 1 {
		t.Errorf("%d risks left, want 1", n)
	}
	if n := s.count(t, "risks", "id = ?", kept); n != 1 {
		t.Errorf("risk %s was deleted too", kept)
	}
	_, err = c.Risks.Get(context.Background(), doomed)
	if !errors.Is(err, riskapi.ErrNotFound) {
		t.Errorf("Get after delete: %v, want NOT_FOUND", err)
	}
}

// An attempt that times out while the server answers slowly is retried with
// the same key; however the attempts interleave on the server, one risk.
func TestRealAttemptTimeoutIsRetriedWithSameKey(t *testing.T) {
	s := startReal(t)
	clock := newStepClock()
	rt := &firstAttemptTimeout{rt: http.DefaultTransport.(*http.Transport).Clone(), d: 100 * time.Millisecond}
	t.Cleanup(rt.rt.CloseIdleConnections)
	c := s.client(t, s.acme.Key, s.proxy.URL, clock, riskapi.WithHTTPClient(&http.Client{Transport: rt}))
	s.proxy.on(http.MethodPost, "/v2/risks", 1, pxHoldAnswer(time.Minute))

	r, err := c.Risks.Create(context.Background(), &riskapi.RiskCreateParams{Title: "Slow answer"})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if r.LastResponse.Attempts < 2 {
		t.Errorf("attempts = %d, want at least 2", r.LastResponse.Attempts)
	}
	reqs := s.proxy.requestsTo(http.MethodPost, "/v2/risks")
	checkOneKey(t, reqs, r.LastResponse.IdempotencyKey, 2)
	if n := s.count(t, "risks", ""); n != 1 {
		t.Fatalf("%d risks, want exactly 1", n)
	}
	if n := s.count(t, "risks", "id = ?", r.ID); n != 1 {
		t.Errorf("the returned id %s is not the stored risk", r.ID)
	}
}

// firstAttemptTimeout gives the first request it carries a deadline of d.
type firstAttemptTimeout struct {
	rt *http.Transport
	d  time.Duration
	n  atomic.Int32
}

func (f *firstAttemptTimeout) RoundTrip(req *http.Request) (*http.Response, error) {
	if f.n.Add(1) != 1 {
		return f.rt.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), f.d)
	resp, err := f.rt.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose{resp.Body, cancel}
	return resp, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	defer c.cancel()
	return c.ReadCloser.Close()
}

// (d) 409 then success: the SDK waits the Retry-After and retries with the
// same key.
func TestReal409ThenSuccessIsRetried(t *testing.T) {
	s := startReal(t)
	clock := newStepClock()
	c := s.client(t, s.acme.Key, s.proxy.URL, clock)
	s.proxy.on(http.MethodPost, "/v2/risks", 1, pxAnswer(http.StatusConflict, riskapi.CodeIdempotencyRequestInProgress, "1"))

	r, err := c.Risks.Create(context.Background(), &riskapi.RiskCreateParams{Title: "After a conflict"})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if w := clock.Waits(); !slices.Equal(w, []time.Duration{time.Second}) {
		t.Errorf("waits = %v, want [1s] (Retry-After: 1)", w)
	}
	if lr := r.LastResponse; lr.Attempts != 2 || lr.IdempotentReplayed || lr.StatusCode != http.StatusCreated {
		t.Errorf("LastResponse = status %d, replayed %v, attempts %d; want 201, false (the 409 never reached the server), 2",
			lr.StatusCode, lr.IdempotentReplayed, lr.Attempts)
	}
	reqs := s.proxy.requestsTo(http.MethodPost, "/v2/risks")
	checkOneKey(t, reqs, r.LastResponse.IdempotencyKey, 2)
	if len(reqs) != 2 {
		t.Errorf("proxy saw %d requests, want 2", len(reqs))
	}
	if n := s.count(t, "risks", ""); n != 1 {
		t.Errorf("%d risks, want 1", n)
	}
}

// (d) Retry-After is waited exactly, as delay-seconds or an HTTP-date read
// against the client's clock, capped at MaxWait; without it, backoff.
func TestRealRetryAfterIsHonoured(t *testing.T) {
	s := startReal(t)
	clock := newStepClock()
	c := s.client(t, s.acme.Key, s.proxy.URL, clock, riskapi.WithMaxWait(10*time.Second))
	// The 4th answer's date is 7 s after the client's clock at that point
	// (start + 2 s + 3 s of waits).
	date := clock.Now().Add(5*time.Second + 7*time.Second).Format(http.TimeFormat)
	for i, f := range []proxyFault{
		pxAnswer(http.StatusTooManyRequests, riskapi.CodeRateLimited, "2"),
		pxAnswer(http.StatusServiceUnavailable, riskapi.CodeStoreUnavailable, "3"),
		pxAnswer(http.StatusServiceUnavailable, riskapi.CodeStoreUnavailable, date),
		pxAnswer(http.StatusConflict, riskapi.CodeIdempotencyRequestInProgress, "120"), // capped at MaxWait
		pxAnswer(http.StatusBadGateway, "", ""),                                        // backoff
		pxAnswer(http.StatusGatewayTimeout, "", ""),                                    // backoff
	} {
		s.proxy.on(http.MethodPost, "/v2/risks", i+1, f)
	}

	r, err := c.Risks.Create(context.Background(), &riskapi.RiskCreateParams{Title: "Patience"})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	w := clock.Waits()
	if len(w) != 6 {
		t.Fatalf("waits = %v, want 6", w)
	}
	if want := []time.Duration{2 * time.Second, 3 * time.Second, 7 * time.Second, 10 * time.Second}; !slices.Equal(w[:4], want) {
		t.Errorf("waits = %v, want %v first (Retry-After 2, 3, a date 7 s ahead, 120 capped at 10 s)", w, want)
	}
	// Retries 4 and 5 (from 0) back off in [0, 500ms·2^n), under MaxWait.
	if w[4] < 0 || w[4] >= 8*time.Second || w[5] < 0 || w[5] >= 10*time.Second {
		t.Errorf("backoff waits = %v, want [0, 8s) and [0, 10s)", w[4:])
	}
	if r.LastResponse.Attempts != 7 {
		t.Errorf("attempts = %d, want 7", r.LastResponse.Attempts)
	}
	checkOneKey(t, s.proxy.requestsTo(http.MethodPost, "/v2/risks"), r.LastResponse.IdempotencyKey, 7)
	if n := s.count(t, "risks", ""); n != 1 {
		t.Errorf("%d risks, want 1", n)
	}
}

// (d) 500 is not retried: the server ran and failed.
func TestReal500IsNotRetried(t *testing.T) {
	s := startReal(t)
	clock := newStepClock()
	c := s.client(t, s.acme.Key, s.proxy.URL, clock)
	s.proxy.on(http.MethodPost, "/v2/risks", 1, pxAnswer(http.StatusInternalServerError, riskapi.CodeInternal, ""))

	_, err := c.Risks.Create(context.Background(), &riskapi.RiskCreateParams{Title: "Doomed"})
	apiErr := checkAPIError(t, err, http.StatusInternalServerError, riskapi.CodeInternal)
	if !errors.Is(err, riskapi.ErrInternal) || apiErr.RequestID != "proxy-1" || apiErr.IdempotencyKey == "" {
		t.Errorf("err = %+v, want INTERNAL from the proxy's request proxy-1 with the call's key", apiErr)
	}
	if reqs := s.proxy.requests(); len(reqs) != 1 {
		t.Errorf("proxy saw %d requests, want 1: %+v", len(reqs), reqs)
	}
	if w := clock.Waits(); len(w) != 0 {
		t.Errorf("waits = %v, want none", w)
	}
	if n := s.count(t, "risks", ""); n != 0 {
		t.Errorf("%d risks, want 0", n)
	}
}

// (d) 422 from the real server is not retried: a caller's key used again for
// a different request. The same key with the same request is a replay.
func TestReal422KeyReusedIsNotRetried(t *testing.T) {
	s := startReal(t)
	clock := newStepClock()
	c := s.client(t, s.acme.Key, s.proxy.URL, clock)
	ctx := context.Background()
	const key = "import-7-row-17"
	params := func(title string) *riskapi.RiskCreateParams {
		return &riskapi.RiskCreateParams{Title: title, Params: riskapi.Params{IdempotencyKey: key}}
	}

	first, err := c.Risks.Create(ctx, params("Row 17"))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	again, err := c.Risks.Create(ctx, params("Row 17"))
	if err != nil {
		t.Fatalf("Create again: %v", err)
	}
	if again.ID != first.ID || !again.LastResponse.IdempotentReplayed || again.LastResponse.IdempotencyKey != key {
		t.Errorf("same key, same request: %s replayed %v, want %s replayed", again.ID, again.LastResponse.IdempotentReplayed, first.ID)
	}

	_, err = c.Risks.Create(ctx, params("Row 18"))
	apiErr := checkAPIError(t, err, http.StatusUnprocessableEntity, riskapi.CodeIdempotencyKeyReused)
	if !errors.Is(err, riskapi.ErrIdempotencyKeyReused) || apiErr.IdempotencyKey != key || strings.HasPrefix(apiErr.RequestID, "proxy-") {
		t.Errorf("err = %+v, want the server's IDEMPOTENCY_KEY_REUSED for key %s", apiErr, key)
	}
	reqs := s.proxy.requestsTo(http.MethodPost, "/v2/risks")
	if len(reqs) != 3 {
		t.Errorf("proxy saw %d requests, want 3 (one per call, none retried): %+v", len(reqs), reqs)
	}
	if w := clock.Waits(); len(w) != 0 {
		t.Errorf("waits = %v, want none", w)
	}
	if n := s.count(t, "risks", ""); n != 1 {
		t.Errorf("%d risks, want 1", n)
	}
}

// (d) The retry budget ends the call with the last attempt's error.
func TestRealRetryBudgetEndsWithLastError(t *testing.T) {
	t.Run("MaxElapsed", func(t *testing.T) {
		s := startReal(t)
		clock := newStepClock()
		c := s.client(t, s.acme.Key, s.proxy.URL, clock, riskapi.WithMaxElapsed(5*time.Second))
		s.proxy.always(http.MethodPost, "/v2/risks", pxAnswer(http.StatusServiceUnavailable, riskapi.CodeStoreUnavailable, "1"))

		_, err := c.Risks.Create(context.Background(), &riskapi.RiskCreateParams{Title: "Never"})
		apiErr := checkAPIError(t, err, http.StatusServiceUnavailable, riskapi.CodeStoreUnavailable)
		// Waits of 1 s end at 1…5 s; a 6th would end at 6 s > 5 s.
		if w := clock.Waits(); !slices.Equal(w, slices.Repeat([]time.Duration{time.Second}, 5)) {
			t.Errorf("waits = %v, want 5 × 1s", w)
		}
		reqs := s.proxy.requests()
		if len(reqs) != 6 {
			t.Fatalf("proxy saw %d requests, want 6", len(reqs))
		}
		if !strings.HasSuffix(apiErr.Detail, "attempt 6") || apiErr.RequestID != "proxy-6" || apiErr.RetryAfter != time.Second {
			t.Errorf("err = %+v, want the 6th (last) answer", apiErr)
		}
		checkOneKeyNotForwarded(t, reqs, apiErr.IdempotencyKey)
	})
	t.Run("MaxRetries", func(t *testing.T) {
		s := startReal(t)
		clock := newStepClock()
		c := s.client(t, s.acme.Key, s.proxy.URL, clock, riskapi.WithMaxRetries(2))
		s.proxy.always(http.MethodPost, "/v2/risks", pxAnswer(http.StatusTooManyRequests, riskapi.CodeRateLimited, "1"))

		_, err := c.Risks.Create(context.Background(), &riskapi.RiskCreateParams{Title: "Never"})
		apiErr := checkAPIError(t, err, http.StatusTooManyRequests, riskapi.CodeRateLimited)
		if !strings.HasSuffix(apiErr.Detail, "attempt 3") || len(clock.Waits()) != 2 {
			t.Errorf("err = %+v after waits %v, want the 3rd answer after 2 waits", apiErr, clock.Waits())
		}
		checkOneKeyNotForwarded(t, s.proxy.requests(), apiErr.IdempotencyKey)
	})
	t.Run("NetworkErrors", func(t *testing.T) {
		// Every answer is lost: the call gives up with the network error,
		// and still only the first attempt created a risk.
		s := startReal(t)
		clock := newStepClock()
		c := s.client(t, s.acme.Key, s.proxy.URL, clock, riskapi.WithMaxRetries(3))
		s.proxy.always(http.MethodPost, "/v2/risks", pxCutAfterAnswer())

		_, err := c.Risks.Create(context.Background(), &riskapi.RiskCreateParams{Title: "Unlucky"})
		var apiErr *riskapi.Error
		if err == nil || errors.As(err, &apiErr) || !strings.Contains(err.Error(), "giving up after 4 attempts") {
			t.Fatalf("err = %v, want a network error after 4 attempts", err)
		}
		reqs := s.proxy.requests()
		if len(reqs) != 4 {
			t.Fatalf("proxy saw %d requests, want 4", len(reqs))
		}
		checkOneKey(t, reqs, reqs[0].Key, 4)
		if n := s.count(t, "risks", ""); n != 1 {
			t.Errorf("%d risks, want 1", n)
		}
	})
}

func checkOneKeyNotForwarded(t *testing.T, reqs []proxiedRequest, key string) {
	t.Helper()
	for i, r := range reqs {
		if r.Key != key || key == "" || r.Forwarded {
			t.Errorf("request %d: key %q forwarded %v, want key %q, answered by the proxy", i+1, r.Key, r.Forwarded, key)
		}
	}
}

// Cancelling the context stops an attempt in flight at once, and nothing is
// retried.
func TestRealContextDeadlineStopsTheCall(t *testing.T) {
	s := startReal(t)
	clock := newStepClock()
	c := s.client(t, s.acme.Key, s.proxy.URL, clock)
	s.proxy.on(http.MethodPost, "/v2/risks", 1, pxDelay(time.Minute))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{Title: "Too late"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the call took %v after its deadline", d)
	}
	if reqs := s.proxy.requests(); len(reqs) != 1 {
		t.Errorf("proxy saw %d requests, want 1", len(reqs))
	}
	if len(clock.Waits()) != 0 {
		t.Errorf("waits = %v, want none", clock.Waits())
	}
}

// (e) The whole surface against the real server, no proxy.
func TestRealEndToEnd(t *testing.T) {
	s := startReal(t)
	ctx := context.Background()
	clock := newStepClock()
	c := s.client(t, s.acme.Key, s.srv.URL, clock)

	r, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{
		Title: "Vendor contract missing a DPA", Description: "No data processing agreement",
		Category: "compliance", Likelihood: riskapi.Ptr(3), Impact: riskapi.Ptr(4), Owner: &riskapi.RiskOwnerParams{Name: riskapi.Ptr("dpo@example.com")},
	})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if r.RiskScore == nil || *r.RiskScore != 12 || r.Status != riskapi.RiskStatusOpen || !strings.HasPrefix(r.ID, "risk_") {
		t.Errorf("created %+v, want riskScore 12 (3×4), status open, a risk_ id", r)
	}
	if lr := r.LastResponse; lr.StatusCode != http.StatusCreated || lr.IdempotentReplayed || lr.Attempts != 1 || lr.RequestID == "" || lr.IdempotencyKey == "" {
		t.Errorf("LastResponse = %+v", lr)
	}

	got, err := c.Risks.Get(ctx, r.ID)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got.Title != r.Title || got.Description != r.Description || got.Category != "compliance" || got.Owner.Name != "dpo@example.com" || got.Owner.UserID != nil ||
		*got.RiskScore != 12 || !got.CreatedAt.Equal(r.CreatedAt) || got.LastResponse.IdempotencyKey != "" {
		t.Errorf("Get = %+v, want %+v (and no key on a read)", got, r)
	}

	// List across pages of 3: 8 risks, 3 pages.
	want := []string{r.ID}
	var keep string // a risk that outlives the test
	for i := range 7 {
		ri, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{Title: "Risk " + string(rune('A'+i))})
		if err != nil {
			t.Fatalf("Create %d: %v", i, err)
		}
		want = append(want, ri.ID)
		keep = ri.ID
	}
	var ids []string
	pages := map[*riskapi.APIResponse]bool{}
	for ri, err := range c.Risks.List(ctx, &riskapi.RiskListParams{Limit: 3}) {
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		ids = append(ids, ri.ID)
		pages[ri.LastResponse] = true
	}
	if len(pages) != 3 {
		t.Errorf("List fetched %d pages, want 3", len(pages))
	}
	slices.Sort(ids)
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("List = %v, want each of %v once", ids, want)
	}
	page, err := c.Risks.ListPage(ctx, &riskapi.RiskListParams{Limit: 5})
	if err != nil || len(page.Data) != 5 || !page.HasMore || page.NextCursor == "" {
		t.Fatalf("ListPage = %+v, %v; want 5 and a cursor", page, err)
	}
	rest, err := riskapi.Collect(c.Risks.List(ctx, &riskapi.RiskListParams{Limit: 5, Cursor: page.NextCursor}))
	if err != nil || len(rest) != 3 {
		t.Errorf("List from the cursor = %d risks, %v; want the other 3", len(rest), err)
	}

	// Update: only the fields given change; a new likelihood re-derives the score.
	up, err := c.Risks.Update(ctx, r.ID, &riskapi.RiskUpdateParams{Likelihood: riskapi.Ptr(5), Status: riskapi.Ptr(riskapi.RiskStatusMitigated), Owner: &riskapi.RiskOwnerParams{Name: riskapi.Ptr("")}})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if up.Title != r.Title || up.Description != r.Description || *up.RiskScore != 20 || up.Status != riskapi.RiskStatusMitigated || up.Owner.Name != "" {
		t.Errorf("Update = %+v, want the same title and description, score 20, mitigated, no owner", up)
	}
	cleared, err := c.Risks.Update(ctx, r.ID, &riskapi.RiskUpdateParams{ClearRiskScore: true})
	if err != nil || cleared.RiskScore != nil || *cleared.Likelihood != 5 {
		t.Errorf("Update ClearRiskScore = %+v, %v; want no score, likelihood kept", cleared, err)
	}

	// Replace: fields not given take their defaults.
	rep, err := c.Risks.Replace(ctx, r.ID, &riskapi.RiskReplaceParams{Title: "Replaced", Impact: riskapi.Ptr(2)})
	if err != nil {
		t.Fatalf("Replace: %v", err)
	}
	if rep.Title != "Replaced" || rep.Description != "" || rep.Category != "" || rep.Likelihood != nil || *rep.Impact != 2 ||
		rep.RiskScore != nil || rep.Status != riskapi.RiskStatusOpen || !rep.CreatedAt.Equal(r.CreatedAt) {
		t.Errorf("Replace = %+v, want only title and impact, defaults elsewhere", rep)
	}
	if title := s.riskTitle(t, r.ID); title != "Replaced" {
		t.Errorf("stored title %q", title)
	}

	// Delete, then 404.
	if err := c.Risks.Delete(ctx, r.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if n := s.count(t, "risks", ""); n != 7 {
		t.Errorf("%d risks after Delete, want 7", n)
	}
	_, err = c.Risks.Get(ctx, r.ID)
	checkAPIError(t, err, http.StatusNotFound, riskapi.CodeNotFound)
	if !errors.Is(err, riskapi.ErrNotFound) || !errors.Is(err, &riskapi.Error{Status: 404}) {
		t.Errorf("errors.Is(%v, ErrNotFound / Status 404) = false", err)
	}
	err = c.Risks.Delete(ctx, r.ID)
	checkAPIError(t, err, http.StatusNotFound, riskapi.CodeNotFound)

	// Validation names the field.
	_, err = c.Risks.Create(ctx, &riskapi.RiskCreateParams{Title: "Bad", Likelihood: riskapi.Ptr(9)})
	apiErr := checkAPIError(t, err, http.StatusBadRequest, riskapi.CodeValidationFailed)
	if len(apiErr.Errors) != 1 || apiErr.Errors[0].Field != "likelihood" {
		t.Errorf("Errors = %+v, want likelihood", apiErr.Errors)
	}

	// A read-only key reads but cannot write: 403, not retried.
	ro := s.client(t, s.acme.ReadKey, s.srv.URL, clock)
	if _, err := ro.Risks.Get(ctx, keep); err != nil {
		t.Errorf("read-only Get: %v", err)
	}
	_, err = ro.Risks.Create(ctx, &riskapi.RiskCreateParams{Title: "Not allowed"})
	checkAPIError(t, err, http.StatusForbidden, riskapi.CodeForbidden)
	if !errors.Is(err, riskapi.ErrForbidden) {
		t.Errorf("errors.Is(%v, ErrForbidden) = false", err)
	}

	// Another tenant's risk does not exist; a bad key is 401.
	other := s.env.Tenant("Globex")
	oc := s.client(t, other.Key, s.srv.URL, clock)
	_, err = oc.Risks.Get(ctx, keep)
	checkAPIError(t, err, http.StatusNotFound, riskapi.CodeNotFound)
	bad := s.client(t, "rk_not_a_real_key", s.srv.URL, clock)
	_, err = bad.Risks.Get(ctx, keep)
	checkAPIError(t, err, http.StatusUnauthorized, riskapi.CodeUnauthenticated)

	if n := s.count(t, "risks", ""); n != 7 {
		t.Errorf("%d risks at the end, want 7", n)
	}
	if w := clock.Waits(); len(w) != 0 {
		t.Errorf("waits = %v, want none: nothing here is retryable", w)
	}
}

// An upload over the server's limit is refused with 413, which is not
// retried, even though the server answers before the SDK has finished
// streaming the body.
func TestRealOversizedUploadIs413(t *testing.T) {
	env := apitest.New(t, func(c *config.Config) { c.Uploads.MaxBytes = 64 << 10 })
	srv := httptest.NewServer(env.App.Echo)
	t.Cleanup(srv.Close)
	s := &realServer{env: env, srv: srv, acme: env.Tenant("Acme")}
	s.proxy = newFaultProxy(t, srv.URL)
	riskID := s.seedRisk(t, "Too big")

	for _, tc := range []struct {
		name string
		set  func(p *riskapi.AttachmentUploadParams)
	}{
		{"ContentLength", func(p *riskapi.AttachmentUploadParams) { p.File = bytes.NewReader(make([]byte, 4<<20)) }},
		{"Chunked", func(p *riskapi.AttachmentUploadParams) {
			p.Open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(make([]byte, 4<<20))), nil }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newStepClock()
			c := s.client(t, s.acme.Key, s.srv.URL, clock)
			p := &riskapi.AttachmentUploadParams{Filename: "big.bin"}
			tc.set(p)
			_, err := c.Attachments.Upload(context.Background(), riskID, p)
			checkAPIError(t, err, http.StatusRequestEntityTooLarge, riskapi.CodePayloadTooLarge)
			if !errors.Is(err, riskapi.ErrPayloadTooLarge) {
				t.Errorf("errors.Is(%v, ErrPayloadTooLarge) = false", err)
			}
			if w := clock.Waits(); len(w) != 0 {
				t.Errorf("waits = %v, want none: 413 is final", w)
			}
		})
	}
	if n := s.count(t, "attachments", ""); n != 0 {
		t.Errorf("%d attachments, want 0", n)
	}
}
