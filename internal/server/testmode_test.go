package server_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
)

// TestTestModeHasItsOwnHalfRateLimit: a test key gets half the live burst by
// default, counted apart: spending it refuses neither a live key nor the same
// session's live requests (docs/sandboxes.md), and TEST_RATE_LIMIT_BURST replaces
// the default.
func TestTestModeHasItsOwnHalfRateLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		burst *int
		want  int
	}{{"default: half", nil, 5}, {"TEST_RATE_LIMIT_BURST=3", ptr(3), 3}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := apitest.New(t, func(c *config.Config) {
				c.RateLimit.RPS, c.RateLimit.Burst, c.RateLimit.TestBurst = 0.001, 10, tc.burst
			})
			a := env.Tenant("Acme")
			testKey := env.TestKey(a)
			session := apitest.Login(t, env, a).Token
			for i := range tc.want {
				r := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks", Bearer: testKey}).Expect(http.StatusOK)
				if i == 0 && !strings.HasPrefix(r.Header().Get("RateLimit-Policy"), `"credential-test";q=`+strconv.Itoa(tc.want)+";") {
					t.Errorf("test key's RateLimit-Policy %q", r.Header().Get("RateLimit-Policy"))
				}
			}
			env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks", Bearer: testKey}).
				ExpectProblem(http.StatusTooManyRequests, "RATE_LIMITED")
			for range 10 {
				env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks", Bearer: a.Key}).Expect(http.StatusOK)
			}
			// A session's test-mode requests count apart from its live ones.
			for range tc.want {
				env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/risks", Bearer: session,
					Header: http.Header{"Riskapi-Mode": {"test"}}}).Expect(http.StatusOK)
			}
			env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/risks", Bearer: session,
				Header: http.Header{"Riskapi-Mode": {"test"}}}).ExpectProblem(http.StatusTooManyRequests, "RATE_LIMITED")
			env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/risks", Bearer: session}).Expect(http.StatusOK)
		})
	}
}

// TestModeHeader: a session names its mode with Riskapi-Mode; another value is
// 400 naming the header, as are two headers, and a cookie write that sends it from the page's own
// origin passes the cross-origin check like any other.
func TestModeHeader(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	session := apitest.Login(t, env, a).Token
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/risks", Bearer: session,
		Header: http.Header{"Riskapi-Mode": {"sandbox"}}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	// Two headers, even agreeing, are refused as two Riskapi-Version headers are.
	for _, modes := range [][]string{{"test", "live"}, {"test", "test"}} {
		res := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/risks", Bearer: session,
			Header: http.Header{"Riskapi-Mode": modes}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
		if !strings.Contains(res.Body.String(), "Riskapi-Mode") {
			t.Errorf("two Riskapi-Mode headers %v: %s, want the header named", modes, res.Body)
		}
	}
	r := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/risks", JSON: map[string]any{"title": "by cookie"},
		Header: http.Header{"Cookie": {"session=" + session}, "Riskapi-Mode": {"test"}, "Sec-Fetch-Site": {"same-origin"}}}).
		Expect(http.StatusCreated).Map()
	if r["livemode"] != false {
		t.Errorf("a cookie write in test mode: livemode %v", r["livemode"])
	}
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/risks", JSON: map[string]any{"title": "cross-site"},
		Header: http.Header{"Cookie": {"session=" + session}, "Riskapi-Mode": {"test"}, "Sec-Fetch-Site": {"cross-site"}}}).
		ExpectProblem(http.StatusForbidden, "FORBIDDEN")
}

func ptr[T any](v T) *T { return &v }
