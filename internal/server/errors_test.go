package server_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
)

// serve sends a hand-made request through the whole router.
func serve(t *testing.T, env *apitest.Env, req *http.Request) *apitest.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	env.App.Echo.ServeHTTP(rec, req)
	return &apitest.Response{ResponseRecorder: rec, T: t}
}

// chunked is a body of n bytes whose length is not announced.
func chunked(s string) io.Reader { return io.MultiReader(strings.NewReader(s)) }

// slowRefill is a RATE_LIMIT_RPS whose bucket refills once in 100 s: a burst spent
// stays spent however slowly a loaded machine runs the test.
const slowRefill = 0.01

func key(k string) http.Header { return http.Header{"Idempotency-Key": {k}} }

// problemMembers are the members a problem document may have.
var problemMembers = []string{"type", "title", "status", "detail", "code", "requestId", "errors", "outcome"}

// checkProblem asserts the contract's error shape: status and code, RFC 9457 members,
// requestId equal to X-Request-Id, Cache-Control: no-store. It returns the document.
func checkProblem(t *testing.T, res *apitest.Response, status int, code string) map[string]any {
	t.Helper()
	res.ExpectProblem(status, code)
	doc := res.Map()
	for k := range doc {
		if !slices.Contains(problemMembers, k) {
			t.Errorf("unexpected member %q in %s", k, res.Body.String())
		}
	}
	for _, k := range problemMembers[:6] {
		if v, ok := doc[k]; !ok || v == "" {
			t.Errorf("member %q missing or empty in %s", k, res.Body.String())
		}
	}
	if got, ok := doc["status"].(float64); !ok || int(got) != status {
		t.Errorf("status member = %v, want %d", doc["status"], status)
	}
	wantType := "https://riskapi.dev/problems/" + strings.ReplaceAll(strings.ToLower(code), "_", "-")
	if doc["type"] != wantType {
		t.Errorf("type = %v, want %s", doc["type"], wantType)
	}
	rid := res.Header().Get(echo.HeaderXRequestID)
	if rid == "" || doc["requestId"] != rid {
		t.Errorf("requestId = %v, X-Request-Id = %q; want equal and set", doc["requestId"], rid)
	}
	if cc := res.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store", cc)
	}
	return doc
}

func checkRetryAfter(t *testing.T, res *apitest.Response) {
	t.Helper()
	ra := res.Header().Get("Retry-After")
	if n, err := strconv.Atoi(ra); err != nil || n < 1 {
		t.Errorf("Retry-After = %q, want whole seconds ≥ 1", ra)
	}
}

// TestErrorCodes produces every code of the contract's error table this service can
// produce (IDEMPOTENCY_REQUEST_IN_PROGRESS is the idempotency suite's) through the
// real router and checks each problem document.
func TestErrorCodes(t *testing.T) {
	t.Parallel()
	big := `{"title":"` + strings.Repeat("x", 1<<20) + `"}`
	// Four servers, not one per case: on PostgreSQL each costs a CREATE DATABASE.
	type fixture struct {
		env   *apitest.Env
		a     *apitest.Tenant
		token string
	}
	fix := func(mods ...func(*config.Config)) *fixture {
		env := apitest.New(t, mods...)
		a := env.Tenant("Acme")
		return &fixture{env, a, apitest.Login(t, env, a).Token}
	}
	shared := fix()
	shared.env.App.Echo.GET("/test-panic", func(echo.Context) error { panic("secret-panic-detail") })
	shared.env.App.Echo.GET("/test-error", func(echo.Context) error { return errors.New("secret-error-detail") })
	required := fix(func(c *config.Config) { c.Idempotency.Required = true })
	limited := fix(func(c *config.Config) { c.RateLimit.RPS, c.RateLimit.Burst = slowRefill, 2 })
	down := fix()
	closeDB(t, down.env)

	tests := []struct {
		name       string
		on         *fixture
		send       func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response
		status     int
		code       string
		retryAfter bool
	}{
		{name: "invalid body", status: 400, code: "VALIDATION_FAILED",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				return apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": ""}})
			}},
		{name: "invalid query", status: 400, code: "VALIDATION_FAILED",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				return apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks?limit=0", Bearer: a.Key})
			}},
		{name: "key too short", status: 400, code: "IDEMPOTENCY_KEY_INVALID",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				return apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Header: key("short"), JSON: map[string]any{"title": "t"}})
			}},
		{name: "key with a space", status: 400, code: "IDEMPOTENCY_KEY_INVALID",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				return apitest.Do(t, env, apitest.Request{Method: "DELETE", Path: "/v2/risks/risk_0193b2c4d5e67f8091a2b3c4d5e6f708", Bearer: a.Key, Header: key("abc def ghi")})
			}},
		{name: "two keys", status: 400, code: "IDEMPOTENCY_KEY_INVALID",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				return apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key,
					Header: http.Header{"Idempotency-Key": {"key-one-1", "key-two-2"}}, JSON: map[string]any{"title": "t"}})
			}},
		{name: "key required", status: 400, code: "IDEMPOTENCY_KEY_REQUIRED",
			on: required,
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				// With a key the same write goes through; reads never need one.
				apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Header: key("required-1"), JSON: map[string]any{"title": "t"}}).Expect(201)
				apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key}).Expect(200)
				return apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "t"}})
			}},
		{name: "no credentials", status: 401, code: "UNAUTHENTICATED",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				return apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks"})
			}},
		{name: "no session", status: 401, code: "UNAUTHENTICATED",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				return apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v1/risks", JSON: map[string]any{"title": "t"}})
			}},
		{name: "wrong password", status: 401, code: "UNAUTHENTICATED",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				return apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v1/sessions", JSON: map[string]any{"email": a.Email, "password": "wrong-password"}})
			}},
		{name: "missing scope", status: 403, code: "FORBIDDEN",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				return apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.ReadKey, JSON: map[string]any{"title": "t"}})
			}},
		{name: "cross-site cookie write", status: 403, code: "FORBIDDEN",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				return apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v1/risks", JSON: map[string]any{"title": "t"},
					Header: http.Header{"Cookie": {"session=" + shared.token}, "Sec-Fetch-Site": {"cross-site"}}})
			}},
		{name: "absent risk", status: 404, code: "NOT_FOUND",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				return apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks/risk_0193b2c4d5e67f8091a2b3c4d5e6f708", Bearer: a.Key})
			}},
		{name: "unknown route", status: 404, code: "NOT_FOUND",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				return apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/no/such/route"})
			}},
		{name: "unknown route under /v2", status: 404, code: "NOT_FOUND",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				return apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/nothing-here", Bearer: a.Key})
			}},
		{name: "method not allowed", status: 405, code: "METHOD_NOT_ALLOWED",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				return apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/healthz"})
			}},
		{name: "body over 1 MiB", status: 413, code: "PAYLOAD_TOO_LARGE",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				return apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: big})
			}},
		{name: "chunked body over 1 MiB", status: 413, code: "PAYLOAD_TOO_LARGE",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				req := httptest.NewRequest("POST", "/v2/risks", chunked(big))
				req.Header.Set("Authorization", "Bearer "+a.Key)
				req.Header.Set("Content-Type", "application/json")
				return serve(t, env, req)
			}},
		{name: "keyed chunked body over 1 MiB", status: 413, code: "PAYLOAD_TOO_LARGE",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				req := httptest.NewRequest("POST", "/v2/risks", chunked(big))
				req.Header.Set("Authorization", "Bearer "+a.Key)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Idempotency-Key", "big-body-1")
				return serve(t, env, req)
			}},
		{name: "login body over 1 MiB", status: 413, code: "PAYLOAD_TOO_LARGE",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				req := httptest.NewRequest("POST", "/v1/sessions", chunked(`{"email":"`+strings.Repeat("a", 1<<20)+`"}`))
				req.Header.Set("Content-Type", "application/json")
				return serve(t, env, req)
			}},
		{name: "key reused", status: 422, code: "IDEMPOTENCY_KEY_REUSED",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Header: key("reused-key-1"), JSON: map[string]any{"title": "a"}}).Expect(201)
				return apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Header: key("reused-key-1"), JSON: map[string]any{"title": "b"}})
			}},
		{name: "key on login", status: 422, code: "IDEMPOTENCY_UNSUPPORTED_ROUTE",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				res := apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v1/sessions", Header: key("login-key-1"),
					JSON: map[string]any{"email": a.Email, "password": a.Password}})
				if sc := res.Header().Get("Set-Cookie"); sc != "" {
					t.Errorf("refused login set a cookie: %s", sc)
				}
				return res
			}},
		{name: "rate limited", status: 429, code: "RATE_LIMITED", retryAfter: true,
			on: limited,
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				for range 2 {
					apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key}).Expect(200)
				}
				return apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key})
			}},
		{name: "panic", status: 500, code: "INTERNAL",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				return apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/test-panic"})
			}},
		{name: "unexpected error", status: 500, code: "INTERNAL",
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				return apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/test-error"})
			}},
		{name: "database down, API key", status: 503, code: "STORE_UNAVAILABLE", retryAfter: true, on: down,
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				return apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key})
			}},
		{name: "database down, keyed write", status: 503, code: "STORE_UNAVAILABLE", retryAfter: true, on: down,
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				return apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v1/risks", Bearer: down.token, Header: key("db-down-1"), JSON: map[string]any{"title": "t"}})
			}},
		{name: "database down, login", status: 503, code: "STORE_UNAVAILABLE", retryAfter: true, on: down,
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				return apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v1/sessions", JSON: map[string]any{"email": a.Email, "password": a.Password}})
			}},
		{name: "database down, readiness", status: 503, code: "STORE_UNAVAILABLE", retryAfter: true, on: down,
			send: func(t *testing.T, env *apitest.Env, a *apitest.Tenant) *apitest.Response {
				apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/healthz"}).Expect(200) // liveness does not need the database
				return apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/readyz"})
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := tt.on
			if f == nil {
				f = shared
			}
			res := tt.send(t, f.env, f.a)
			doc := checkProblem(t, res, tt.status, tt.code)
			if tt.retryAfter {
				checkRetryAfter(t, res)
			}
			if strings.Contains(doc["detail"].(string), "secret-") {
				t.Errorf("detail leaks internals: %q", doc["detail"])
			}
		})
	}
}

func closeDB(t *testing.T, env *apitest.Env) {
	t.Helper()
	sqlDB, err := env.App.DB.DB.DB()
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlDB.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestInternalErrorsAreLogged: the client sees nothing of a panic, the log has it
// under the request id the client got.
func TestInternalErrorsAreLogged(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	env.App.Echo.GET("/test-panic", func(echo.Context) error { panic("secret-panic-detail") })
	res := apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/test-panic"})
	checkProblem(t, res, 500, "INTERNAL")
	if strings.Contains(res.Body.String(), "secret") || strings.Contains(res.Body.String(), "goroutine") {
		t.Errorf("500 body leaks the panic: %s", res.Body.String())
	}
	logs := env.Logs.String()
	rid := res.Header().Get(echo.HeaderXRequestID)
	var found bool
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, rid) && strings.Contains(line, "secret-panic-detail") {
			found = true
		}
	}
	if !found {
		t.Errorf("no log line carries both the request id %s and the panic:\n%s", rid, logs)
	}
	// The server keeps serving.
	apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/healthz"}).Expect(200)
}

// TestRateLimitIsPerCredential: one credential's burst does not limit another's.
func TestRateLimitIsPerCredential(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *config.Config) { c.RateLimit.RPS, c.RateLimit.Burst = slowRefill, 2 })
	a, b := env.Tenant("Acme"), env.Tenant("Beta")
	tokA := apitest.Login(t, env, a).Token
	tokB := apitest.Login(t, env, b).Token
	for range 2 {
		apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key}).Expect(200)
		apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v1/risks", Bearer: tokA}).Expect(200)
	}
	checkRetryAfter(t, checkRateLimited(t, apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key})))
	checkRateLimited(t, apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "t"}}))
	checkRateLimited(t, apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v1/risks", Bearer: tokA}))
	// Another key of the same tenant, another tenant's key, another user's session:
	// each has its own bucket.
	apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.ReadKey}).Expect(200)
	apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: b.Key}).Expect(200)
	apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v1/risks", Bearer: tokB}).Expect(200)
}

func checkRateLimited(t *testing.T, res *apitest.Response) *apitest.Response {
	t.Helper()
	checkProblem(t, res, 429, "RATE_LIMITED")
	return res
}

// TestRequestID: every response carries X-Request-Id; a client's well-formed one is
// kept, anything else is replaced.
func TestRequestID(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	env.App.Echo.GET("/test-panic", func(echo.Context) error { panic("boom") })
	var r struct{ ID string }
	apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "t"}}).Expect(201).Decode(&r)

	seen := map[string]bool{}
	for _, req := range []apitest.Request{
		{Method: "GET", Path: "/healthz"},
		{Method: "GET", Path: "/readyz"},
		{Method: "GET", Path: "/metrics"},
		{Method: "GET", Path: "/v2/risks", Bearer: a.Key},
		{Method: "GET", Path: "/v2/risks/" + r.ID, Bearer: a.Key},
		{Method: "DELETE", Path: "/v2/risks/" + r.ID, Bearer: a.Key, Header: key("delete-key-1")},
		{Method: "DELETE", Path: "/v2/risks/" + r.ID, Bearer: a.Key, Header: key("delete-key-1")}, // replay
		{Method: "GET", Path: "/v2/risks"},
		{Method: "HEAD", Path: "/v2/risks"},
		{Method: "GET", Path: "/nope"},
		{Method: "GET", Path: "/test-panic"},
		{Method: "POST", Path: "/v1/sessions", Body: "{"},
	} {
		res := apitest.Do(t, env, req)
		rid := res.Header().Get(echo.HeaderXRequestID)
		if rid == "" {
			t.Errorf("%s %s → %d without X-Request-Id", req.Method, req.Path, res.Code)
		}
		if seen[rid] {
			t.Errorf("%s %s: request id %q given twice", req.Method, req.Path, rid)
		}
		seen[rid] = true
	}

	shape := regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
	tests := []struct {
		name, sent string
		kept       bool
	}{
		{"token", "req-123.abc_DEF", true},
		{"uuid", "5f0c7e9a-3b1d-4c2e-9f6a-1d2b3c4d5e6f", true},
		{"128 characters", strings.Repeat("a", 128), true},
		{"129 characters", strings.Repeat("a", 129), false},
		{"spaces", "abc def", false},
		{"newline", "abc\ninjected=1", false},
		{"quote", `abc"def`, false},
		{"non-ASCII", "abcé", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, req := range []apitest.Request{
				{Method: "GET", Path: "/v2/risks", Bearer: a.Key, Header: http.Header{"X-Request-Id": {tt.sent}}},
				{Method: "GET", Path: "/v2/risks", Header: http.Header{"X-Request-Id": {tt.sent}}}, // a problem
			} {
				res := apitest.Do(t, env, req)
				got := res.Header().Get(echo.HeaderXRequestID)
				if tt.kept && got != tt.sent {
					t.Errorf("X-Request-Id = %q, want the client's %q", got, tt.sent)
				}
				if !tt.kept && (got == tt.sent || !shape.MatchString(got)) {
					t.Errorf("X-Request-Id = %q for a client's %q, want a fresh token", got, tt.sent)
				}
				if res.Code >= 400 {
					if diff := cmp.Diff(got, res.Map()["requestId"]); diff != "" {
						t.Errorf("requestId differs from the header (-header +body):\n%s", diff)
					}
				}
			}
		})
	}

	// A HEAD that fails carries the status and headers only.
	res := apitest.Do(t, env, apitest.Request{Method: "HEAD", Path: "/v2/risks"}).Expect(401)
	if res.Body.Len() != 0 || res.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("HEAD error: body %q, Cache-Control %q; want none and no-store", res.Body.String(), res.Header().Get("Cache-Control"))
	}
}
