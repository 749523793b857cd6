// Package apitest runs riskapi's real router, wired by internal/app on a fresh
// database of the store under test (see dbtest), and gives tests short ways to make
// tenants, credentials and requests. Nothing is mocked.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/riskapi/riskapi/internal/apiversion"
	"github.com/riskapi/riskapi/internal/app"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/tenants"
)

// Env is one running riskapi.
type Env struct {
	T     testing.TB
	App   *app.App
	Clock *Clock
	// Logs collects the server's log output. Read it only once the requests are
	// answered; LogText is safe while the server may still be writing.
	Logs *bytes.Buffer
	logs *syncBuffer
}

// LogText returns the server's log output so far; safe to call while it writes.
func (e *Env) LogText() string {
	e.logs.mu.Lock()
	defer e.logs.mu.Unlock()
	return e.logs.buf.String()
}

// Config returns the configuration New uses: config.Default() on a fresh database
// and upload folder, listening on a free port, with rate limiting off.
func Config(tb testing.TB) config.Config {
	cfg := config.Default()
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.Database.URL, cfg.Database.Pooler = dbtest.URL(tb), dbtest.Pooler()
	if dbtest.Postgres() {
		// PostgreSQL has no data directory of its own: the key file would land in
		// the package's folder (SQLite keeps it beside the database file).
		cfg.Database.SecretKey = ids.New(ids.Tenant) + ids.New(ids.Tenant)
	}
	cfg.Uploads.Dir = tb.TempDir()
	cfg.RateLimit = config.RateLimit{}
	return cfg
}

// New starts riskapi with Config(tb), modified by each of mods.
func New(tb testing.TB, mods ...func(*config.Config)) *Env {
	tb.Helper()
	return NewWith(tb, app.Options{}, mods...)
}

// NewWith is New with app options (its clock is always the test's; its bcrypt cost
// is bcrypt.MinCost unless opts names one: a test of what a real hash's time allows).
func NewWith(tb testing.TB, opts app.Options, mods ...func(*config.Config)) *Env {
	tb.Helper()
	cfg := Config(tb)
	for _, m := range mods {
		m(&cfg)
	}
	clock := &Clock{}
	if opts.BcryptCost == 0 {
		opts.BcryptCost = bcrypt.MinCost
	}
	opts.Now = clock.Now
	logs := &syncBuffer{}
	a, err := app.Open(context.Background(), cfg, slog.New(slog.NewJSONHandler(logs, nil)),
		opts)
	if err != nil {
		tb.Fatalf("open app: %v", err)
	}
	tb.Cleanup(func() { a.Close() })
	return &Env{T: tb, App: a, Clock: clock, Logs: &logs.buf, logs: logs}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

// Tenant is a tenant with a user and keys.
type Tenant struct {
	ID       string
	Email    string
	Password string
	// Key has every scope (tenants.AllScopes); ReadKey only risks:read.
	Key, ReadKey     string
	KeyID, ReadKeyID string
}

// Tenant creates a tenant named name with a user and two API keys, pinned to API
// version 2026-12-01: the shapes the tests written before versions send and read.
func (e *Env) Tenant(name string) *Tenant {
	e.T.Helper()
	return e.TenantAt(name, apiversion.V20261201)
}

// TenantAt is Tenant pinned to API version v.
func (e *Env) TenantAt(name string, v apiversion.Version) *Tenant {
	e.T.Helper()
	ctx := context.Background()
	svc := e.App.Tenants
	t, err := svc.CreateTenantAt(ctx, name, v)
	if err != nil {
		e.T.Fatalf("create tenant: %v", err)
	}
	email := strings.ToLower(strings.ReplaceAll(name, " ", "-")) + "-" + t.ID[len(t.ID)-8:] + "@example.com"
	if _, err := svc.CreateUser(ctx, t.ID, email, "correct horse battery", tenants.RoleAdmin); err != nil {
		e.T.Fatalf("create user: %v", err)
	}
	k, key, err := svc.CreateAPIKey(ctx, t.ID, "rw", tenants.AllScopes)
	if err != nil {
		e.T.Fatalf("create key: %v", err)
	}
	rk, readKey, err := svc.CreateAPIKey(ctx, t.ID, "ro", []tenants.Scope{tenants.ScopeRisksRead})
	if err != nil {
		e.T.Fatalf("create key: %v", err)
	}
	return &Tenant{ID: t.ID, Email: email, Password: "correct horse battery",
		Key: key, ReadKey: readKey, KeyID: k.ID, ReadKeyID: rk.ID}
}

// TestKey creates a test-mode API key (rk_test_…) of t with every scope: it reaches
// t's sandbox only (docs/sandboxes.md).
func (e *Env) TestKey(t *Tenant) string {
	e.T.Helper()
	_, key, err := e.App.Tenants.CreateModeAPIKey(context.Background(), t.ID, "test", tenants.AllScopes, tenants.ModeTest)
	if err != nil {
		e.T.Fatalf("create test key: %v", err)
	}
	return key
}

// Request is one HTTP request to the server.
type Request struct {
	Method string
	Path   string
	// Body is sent as is; a non-nil JSON is marshalled instead.
	Body string
	JSON any
	// Header is added to the request (Content-Type defaults to application/json
	// when there is a body).
	Header http.Header
	// Bearer, when set, is sent as Authorization: Bearer.
	Bearer string
}

// Response is a recorded response.
type Response struct {
	*httptest.ResponseRecorder
	T testing.TB
}

// Do sends r through the whole router.
func (e *Env) Do(r Request) *Response {
	e.T.Helper()
	body := r.Body
	if r.JSON != nil {
		b, err := json.Marshal(r.JSON)
		if err != nil {
			e.T.Fatal(err)
		}
		body = string(b)
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(r.Method, r.Path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range r.Header {
		req.Header.Del(k)
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if r.Bearer != "" {
		req.Header.Set("Authorization", "Bearer "+r.Bearer)
	}
	rec := httptest.NewRecorder()
	e.App.Echo.ServeHTTP(rec, req)
	return &Response{ResponseRecorder: rec, T: e.T}
}

// Decode unmarshals the body into v.
func (r *Response) Decode(v any) {
	r.T.Helper()
	if err := json.Unmarshal(r.Body.Bytes(), v); err != nil {
		r.T.Fatalf("decode %q: %v", r.Body.String(), err)
	}
}

// Map returns the body as a JSON object.
func (r *Response) Map() map[string]any {
	r.T.Helper()
	var m map[string]any
	r.Decode(&m)
	return m
}

// Code returns the problem code of an error response, failing the test if the body
// is not application/problem+json.
func (r *Response) ProblemCode() string {
	r.T.Helper()
	if ct := r.Header().Get("Content-Type"); ct != "application/problem+json" {
		r.T.Fatalf("Content-Type = %q, want application/problem+json; body %s", ct, r.Body.String())
	}
	code, _ := r.Map()["code"].(string)
	return code
}

// Expect fails the test unless the status is want.
func (r *Response) Expect(want int) *Response {
	r.T.Helper()
	if r.Code != want {
		r.T.Fatalf("status = %d, want %d; body %s", r.Code, want, r.Body.String())
	}
	return r
}

// ExpectProblem fails the test unless the response is status with problem code.
func (r *Response) ExpectProblem(status int, code string) *Response {
	r.T.Helper()
	r.Expect(status)
	if got := r.ProblemCode(); got != code {
		r.T.Fatalf("code = %q, want %q; body %s", got, code, r.Body.String())
	}
	return r
}
