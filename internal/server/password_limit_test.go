package server_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
)

// passwordEnv is riskapi behind a trusted proxy (X-Forwarded-For names the client),
// with RATE_LIMIT_RPS 0: the password throttle holds whatever it says.
func passwordEnv(t *testing.T) *apitest.Env {
	_, proxies, _ := net.ParseCIDR("192.0.2.0/24") // httptest's RemoteAddr
	return apitest.New(t, func(c *config.Config) {
		c.RateLimit.RPS, c.RateLimit.Burst = 0, 0
		c.HTTP.TrustedProxies = []*net.IPNet{proxies}
	})
}

// signIn posts a sign-in from client address from.
func signIn(env *apitest.Env, from, email, password string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", "/v1/sessions", strings.NewReader(`{"email":"`+email+`","password":"`+password+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", from)
	return env.DoRaw(req).ResponseRecorder
}

// TestPasswordFailuresPerAccount: ten wrong passwords for one account, each from
// another address, and the eleventh attempt — even with the right password, from a
// fresh address — is 429 with Retry-After, with rate limiting off (issue 25, item 5).
// Another account is not affected.
func TestPasswordFailuresPerAccount(t *testing.T) {
	t.Parallel()
	env := passwordEnv(t)
	a, b := env.Tenant("Acme"), env.Tenant("Beta")
	for i := range 10 {
		if res := signIn(env, "198.51.100."+strconv.Itoa(i+1), a.Email, "wrong password"); res.Code != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d, want 401", i+1, res.Code)
		}
	}
	res := signIn(env, "203.0.113.9", a.Email, a.Password)
	if res.Code != http.StatusTooManyRequests || res.Header().Get("Retry-After") == "" {
		t.Fatalf("11th attempt on the account: %d (Retry-After %q), want 429 with Retry-After", res.Code, res.Header().Get("Retry-After"))
	}
	if n, _ := strconv.Atoi(res.Header().Get("Retry-After")); n < 60 || n > 15*60 {
		t.Errorf("Retry-After %d s, want the rest of the 15-minute window", n)
	}
	if res := signIn(env, "203.0.113.9", b.Email, b.Password); res.Code != http.StatusCreated {
		t.Errorf("another account from the same address: %d, want 201 %s", res.Code, res.Body)
	}
}

// TestDisabledTenantSignIn: a user of a disabled tenant who signs in with the right
// password is told that the tenant is disabled, not that the password is wrong, and
// those attempts are not counted as wrong passwords: a dozen of them from one office
// network lock out neither that account nor the other tenants' users behind it. A
// wrong password for that account still says so and still counts.
func TestDisabledTenantSignIn(t *testing.T) {
	t.Parallel()
	env := passwordEnv(t)
	a, b := env.Tenant("Acme"), env.Tenant("Beta")
	if err := env.App.Tenants.SetTenantDisabled(context.Background(), a.ID, true); err != nil {
		t.Fatal(err)
	}
	const office = "198.51.100.7"
	for i := range 12 {
		res := signIn(env, office, a.Email, a.Password)
		if res.Code != http.StatusUnauthorized || !strings.Contains(res.Body.String(), "tenant is disabled") {
			t.Fatalf("right password %d of a disabled tenant's user: %d %s, want 401 saying the tenant is disabled", i+1, res.Code, res.Body)
		}
	}
	if res := signIn(env, office, b.Email, b.Password); res.Code != http.StatusCreated {
		t.Errorf("another tenant's user from the same network: %d, want 201", res.Code)
	}
	res := signIn(env, office, a.Email, "wrong password")
	if res.Code != http.StatusUnauthorized || !strings.Contains(res.Body.String(), "email or password is wrong") {
		t.Errorf("wrong password of a disabled tenant's user: %d %s, want 401 saying the password is wrong", res.Code, res.Body)
	}
	for i := range 9 {
		signIn(env, "198.51.100."+strconv.Itoa(i+20), a.Email, "wrong password")
	}
	if res := signIn(env, "203.0.113.9", a.Email, a.Password); res.Code != http.StatusTooManyRequests {
		t.Errorf("after ten wrong passwords for the account: %d, want 429", res.Code)
	}
	if err := env.App.Tenants.SetTenantDisabled(context.Background(), a.ID, false); err != nil {
		t.Fatal(err)
	}
}

// TestPasswordFailuresPerNetwork: wrong passwords from ten addresses of one IPv6
// /64, each for another account, and the next attempt from that /64 is 429; an
// address of another /64 still signs in.
func TestPasswordFailuresPerNetwork(t *testing.T) {
	t.Parallel()
	env := passwordEnv(t)
	a := env.Tenant("Acme")
	for i := range 10 {
		from := "2001:db8:1:2::" + strconv.Itoa(i+10)
		if res := signIn(env, from, "nobody"+strconv.Itoa(i)+"@example.com", "wrong password"); res.Code != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d, want 401", i+1, res.Code)
		}
	}
	if res := signIn(env, "2001:db8:1:2:ffff::1", a.Email, a.Password); res.Code != http.StatusTooManyRequests {
		t.Errorf("11th attempt from the /64: %d, want 429", res.Code)
	}
	if res := signIn(env, "2001:db8:1:3::1", a.Email, a.Password); res.Code != http.StatusCreated {
		t.Errorf("an address of another /64: %d, want 201", res.Code)
	}
}

// TestPasswordChangeFailuresThrottled: ten wrong current passwords at POST
// /v1/me/password, and the eleventh attempt is 429 — the right password included —
// instead of another bcrypt check.
func TestPasswordChangeFailuresThrottled(t *testing.T) {
	t.Parallel()
	env := passwordEnv(t)
	a := env.Tenant("Acme")
	s := apitest.Login(t, env, a)
	change := func(current string) *apitest.Response {
		return env.Do(apitest.Request{Method: "POST", Path: "/v1/me/password", Bearer: s.Token,
			JSON: map[string]string{"currentPassword": current, "newPassword": "a new password 1"}})
	}
	for i := range 10 {
		change("wrong password "+strconv.Itoa(i)).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	}
	res := change(a.Password)
	res.ExpectProblem(http.StatusTooManyRequests, "RATE_LIMITED")
	if res.Header().Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
}

// TestSignInNeedsJSONFromItsOwnOrigin: a sign-in without Content-Type:
// application/json is 415 (a cross-site form can send text/plain without a
// preflight), and a browser's sign-in from another origin is 403: login CSRF.
func TestSignInNeedsJSONFromItsOwnOrigin(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	body := `{"email":"` + a.Email + `","password":"` + a.Password + `"}`
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded"} {
		req := httptest.NewRequest("POST", "/v1/sessions", strings.NewReader(body))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		res := env.DoRaw(req)
		res.T = t
		res.ExpectProblem(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
		if len(res.Result().Cookies()) > 0 {
			t.Errorf("Content-Type %q: a cookie was set", ct)
		}
	}
	env.Do(apitest.Request{Method: "POST", Path: "/v1/sessions", Body: body,
		Header: http.Header{"Origin": {"http://attacker.example:8081"}}}).ExpectProblem(http.StatusForbidden, "FORBIDDEN")
	env.Do(apitest.Request{Method: "POST", Path: "/v1/sessions", Body: body,
		Header: http.Header{"Sec-Fetch-Site": {"same-origin"}}}).Expect(http.StatusCreated)
}

// TestSecureCookieOnlyOverTLS: the session cookie is Secure when the request came
// over TLS through a proxy in TRUSTED_PROXIES, and not when any other client merely
// claims so with X-Forwarded-Proto (issue 25, item 9).
func TestSecureCookieOnlyOverTLS(t *testing.T) {
	t.Parallel()
	env := passwordEnv(t) // trusts 192.0.2.0/24, httptest's RemoteAddr
	a := env.Tenant("Acme")
	secure := func(remote string) bool {
		req := httptest.NewRequest("POST", "/v1/sessions", strings.NewReader(`{"email":"`+a.Email+`","password":"`+a.Password+`"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-Proto", "https")
		req.RemoteAddr = remote
		res := env.DoRaw(req)
		if res.Code != http.StatusCreated {
			t.Fatalf("sign-in from %s: %d %s", remote, res.Code, res.Body.String())
		}
		for _, c := range res.Result().Cookies() {
			if c.Name == "session" {
				return c.Secure
			}
		}
		t.Fatal("no session cookie")
		return false
	}
	if !secure("192.0.2.1:4000") {
		t.Error("TLS through a trusted proxy: cookie not Secure")
	}
	// Not in TRUSTED_PROXIES, public or private (Echo's default trusted any private
	// address's header).
	for _, remote := range []string{"203.0.113.5:4000", "10.1.2.3:4000"} {
		if secure(remote) {
			t.Errorf("X-Forwarded-Proto from %s, not a trusted proxy, made the cookie Secure", remote)
		}
	}
}

// TestFailedAuthenticationsLimited: a client network whose credentials failed 1000
// times in 15 minutes gets 429 before its next credential is looked at, valid or
// not; another network is not affected (issue 25, item 8: failed authentications
// were never limited).
func TestFailedAuthenticationsLimited(t *testing.T) {
	t.Parallel()
	env := passwordEnv(t)
	a := env.Tenant("Acme")
	get := func(from, key string) int {
		req := httptest.NewRequest("GET", "/v2/risks", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("X-Forwarded-For", from)
		return env.DoRaw(req).Code
	}
	for i := range 1000 {
		if code := get("198.51.100.7", "rk_guess"+strconv.Itoa(i)); code != http.StatusUnauthorized {
			t.Fatalf("bad key %d: %d, want 401", i, code)
		}
	}
	if code := get("198.51.100.7", a.Key); code != http.StatusTooManyRequests {
		t.Errorf("after 1000 failures from the network: %d, want 429", code)
	}
	if code := get("198.51.100.8", a.Key); code != http.StatusOK {
		t.Errorf("another network: %d, want 200", code)
	}
}

// TestRequestsWithoutCredentialsAreNotFailures: a signed-out page asking who is
// signed in presents no credential and guesses nothing. Counted as failed
// authentications, 1,000 of them (an idle sign-in tab) locked its whole network
// out, valid keys and sessions included (found by a fresh user on the dashboard).
func TestRequestsWithoutCredentialsAreNotFailures(t *testing.T) {
	t.Parallel()
	env := passwordEnv(t)
	a := env.Tenant("Acme")
	for i := range 1100 {
		req := httptest.NewRequest("GET", "/v1/me", nil)
		req.Header.Set("X-Forwarded-For", "198.51.100.9")
		if code := env.DoRaw(req).Code; code != http.StatusUnauthorized {
			t.Fatalf("request %d without a credential: %d, want 401", i, code)
		}
	}
	req := httptest.NewRequest("GET", "/v2/risks", nil)
	req.Header.Set("Authorization", "Bearer "+a.Key)
	req.Header.Set("X-Forwarded-For", "198.51.100.9")
	if code := env.DoRaw(req).Code; code != http.StatusOK {
		t.Errorf("a valid key from that network after 1,100 credential-less requests: %d, want 200", code)
	}
}

// TestFailedAuthenticationsSharedThroughRedis: two instances sharing Redis. After
// 1000 failed authentications from a network on the first, the first refuses the
// network's valid key at once, and the second does too once its copy of the count
// (at most a second old, docs/security.md) has been read again.
func TestFailedAuthenticationsSharedThroughRedis(t *testing.T) {
	t.Parallel()
	url := redisURL(t)
	prefix := uniquePrefix(t, url)
	_, proxies, _ := net.ParseCIDR("192.0.2.0/24") // httptest's RemoteAddr
	shared := func(c *config.Config) {
		c.RateLimit.RPS, c.RateLimit.Burst = 0, 0
		c.HTTP.TrustedProxies = []*net.IPNet{proxies}
		c.RateLimit.RedisURL, c.RateLimit.RedisPrefix = url, prefix
	}
	first := apitest.New(t, shared)
	second := apitest.New(t, shared, func(c *config.Config) { c.Database.URL = first.App.Config.Database.URL })
	a := first.Tenant("Acme")
	get := func(env *apitest.Env, key string) int {
		req := httptest.NewRequest("GET", "/v2/risks", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("X-Forwarded-For", "198.51.100.7")
		return env.DoRaw(req).Code
	}
	if code := get(second, a.Key); code != http.StatusOK { // the second keeps a copy of 0
		t.Fatalf("second, before any failure: %d, want 200", code)
	}
	for i := range 1000 {
		if code := get(first, "rk_guess"+strconv.Itoa(i)); code != http.StatusUnauthorized {
			t.Fatalf("bad key %d: %d, want 401", i, code)
		}
	}
	if code := get(first, a.Key); code != http.StatusTooManyRequests {
		t.Errorf("first, after its 1000 failures: %d, want 429", code)
	}
	time.Sleep(1100 * time.Millisecond)
	if code := get(second, a.Key); code != http.StatusTooManyRequests {
		t.Errorf("second, a second after the first's 1000 failures: %d, want 429", code)
	}
}
