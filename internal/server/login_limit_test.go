package server_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
)

// TestSignInAttemptsAreRateLimitedPerNetwork: a network's sign-in attempts are
// limited to 20 at once, then one a second (docs/security.md), and a forged
// X-Forwarded-For (no TRUSTED_PROXIES here) does not open a fresh bucket: after 20
// attempts for 20 different emails, a correct password waits like any attempt —
// 429 with a Retry-After of a second or two — and signs in once it has waited.
// API keys keep their own, per-credential budget. On both counting stores.
func TestSignInAttemptsAreRateLimitedPerNetwork(t *testing.T) {
	t.Parallel()
	for name, store := range limitStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			signInRate(t, apitest.New(t, func(c *config.Config) { c.RateLimit.RPS, c.RateLimit.Burst = 100, 200 }, store))
		})
	}
}

func signInRate(t *testing.T, env *apitest.Env) {
	a := env.Tenant("Acme")
	start := time.Now()
	for i := range 20 {
		wrong := map[string]string{"email": "nobody" + strconv.Itoa(i) + "@example.com", "password": "not the password"}
		env.Do(apitest.Request{Method: "POST", Path: "/v1/sessions", JSON: wrong,
			Header: map[string][]string{"X-Forwarded-For": {"198.51.100." + strconv.Itoa(i+1)}}}).ExpectProblem(401, "UNAUTHENTICATED")
	}
	right := apitest.Request{Method: "POST", Path: "/v1/sessions", JSON: map[string]string{"email": a.Email, "password": a.Password},
		Header: map[string][]string{"X-Forwarded-For": {"203.0.113.9"}}}
	// The bucket refills one a second: when the twenty took longer than that (a
	// loaded machine, -race), a refill may admit the right password as many times
	// as seconds have passed, and no more.
	var r *apitest.Response
	for admitted := 0; ; admitted++ {
		if r = env.Do(right); r.Code != 201 {
			break
		}
		if allowed := int(time.Since(start) / time.Second); admitted+1 > allowed {
			t.Fatalf("%d right passwords admitted %v after the first of 20 attempts, want at most one a second", admitted+1, time.Since(start))
		}
	}
	r.ExpectProblem(429, "RATE_LIMITED")
	wait, err := strconv.Atoi(r.Header().Get("Retry-After"))
	if err != nil || wait < 1 || wait > 2 {
		t.Fatalf("Retry-After %q, want a second or two", r.Header().Get("Retry-After"))
	}
	env.Do(apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key}).Expect(200)
	time.Sleep(time.Duration(wait) * time.Second)
	env.Do(right).Expect(201)
}
