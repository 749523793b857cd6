package server_test

import (
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
)

// Password guessing is limited per client address before any credential exists, and
// a forged X-Forwarded-For does not open a fresh bucket.
func TestLoginAttemptsAreLimitedPerAddress(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *config.Config) { c.RateLimit.RPS, c.RateLimit.Burst = 100, 200 })
	a := env.Tenant("Acme")
	wrong := map[string]string{"email": a.Email, "password": "not the password"}
	for i := range 10 {
		env.Do(apitest.Request{Method: "POST", Path: "/v1/sessions", JSON: wrong,
			Header: map[string][]string{"X-Forwarded-For": {"198.51.100." + string(rune('1'+i))}}}).ExpectProblem(401, "UNAUTHENTICATED")
	}
	r := env.Do(apitest.Request{Method: "POST", Path: "/v1/sessions", JSON: map[string]string{"email": a.Email, "password": a.Password},
		Header: map[string][]string{"X-Forwarded-For": {"203.0.113.9"}}}).ExpectProblem(429, "RATE_LIMITED")
	if r.Header().Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
	// API keys have their own, per-credential budget.
	env.Do(apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key}).Expect(200)
}
