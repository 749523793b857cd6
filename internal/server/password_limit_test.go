package server_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/app"
	"github.com/riskapi/riskapi/internal/config"
	"golang.org/x/crypto/bcrypt"
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

// limitStores are the two places failures are counted: this instance's memory, and
// Redis shared by instances (when one runs on 127.0.0.1:6379; its keys under a
// prefix of the test's own).
func limitStores(t *testing.T) map[string]func(*config.Config) {
	t.Helper()
	out := map[string]func(*config.Config){"memory": func(*config.Config) {}}
	if url, ok := redisReachable(); ok {
		prefix := uniquePrefix(t, url)
		out["redis"] = func(c *config.Config) { c.RateLimit.RedisURL, c.RateLimit.RedisPrefix = url, prefix }
	}
	return out
}

// passwordEnvOn is passwordEnv counting in store (limitStores).
func passwordEnvOn(t *testing.T, store func(*config.Config)) *apitest.Env {
	_, proxies, _ := net.ParseCIDR("192.0.2.0/24")
	return apitest.New(t, func(c *config.Config) {
		c.RateLimit.RPS, c.RateLimit.Burst = 0, 0
		c.HTTP.TrustedProxies = []*net.IPNet{proxies}
	}, store)
}

// detailOf is a problem answer's detail.
func detailOf(t *testing.T, res *httptest.ResponseRecorder) string {
	t.Helper()
	var p struct{ Detail string }
	if err := json.Unmarshal(res.Body.Bytes(), &p); err != nil {
		t.Fatalf("not a problem body: %s", res.Body)
	}
	return p.Detail
}

// TestWrongPasswordsLockOnlyTheirAccountFromTheirNetwork: a member typing the wrong
// password twelve times from the office locks out that account from that network
// — its right password is 429, and the 429 says why — and nothing else: another
// tenant's admin behind the same address signs in, and the member signs in from
// another network (issue 36: one member's typos locked a colleague out for 15
// minutes). On both counting stores.
func TestWrongPasswordsLockOnlyTheirAccountFromTheirNetwork(t *testing.T) {
	t.Parallel()
	for name, store := range limitStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := passwordEnvOn(t, store)
			member, admin := env.Tenant("Acme"), env.Tenant("Beta")
			const office = "198.51.100.7"
			// 401 for ten, then 429; Redis failing open under load may leave a
			// failure or two uncounted, and so a few more 401s.
			refusedAt := -1
			for i := 0; i < 12 || refusedAt < 0; i++ {
				res := signIn(env, office, member.Email, "wrong password")
				switch {
				case res.Code == http.StatusTooManyRequests && i >= 10:
					if refusedAt < 0 {
						refusedAt = i
					}
				case res.Code == http.StatusUnauthorized && refusedAt < 0 && i < 15:
				default:
					t.Fatalf("wrong password %d: %d, want 401 for the first ten, then 429", i+1, res.Code)
				}
			}
			if refusedAt > 10 {
				t.Logf("%d failures counted before the 429: the store let some through uncounted", refusedAt)
			}
			res := signIn(env, office, member.Email, member.Password)
			if res.Code != http.StatusTooManyRequests {
				t.Fatalf("the member's right password from the office: %d, want 429", res.Code)
			}
			if d := detailOf(t, res); !strings.Contains(d, "10 wrong passwords for this account from your network") {
				t.Errorf("429 detail %q does not say why", d)
			}
			if n, _ := strconv.Atoi(res.Header().Get("Retry-After")); n < 60 || n > 15*60 {
				t.Errorf("Retry-After %q, want the rest of the 15-minute window", res.Header().Get("Retry-After"))
			}
			if res := signIn(env, office, admin.Email, admin.Password); res.Code != http.StatusCreated {
				t.Errorf("another tenant's admin from the same address: %d, want 201 %s", res.Code, res.Body)
			}
			if res := signIn(env, "203.0.113.9", member.Email, member.Password); res.Code != http.StatusCreated {
				t.Errorf("the member from another network: %d, want 201 %s", res.Code, res.Body)
			}
		})
	}
}

// TestUnknownEmailsLockNobody: wrong passwords for twenty emails nobody has, from
// one address and from addresses of one IPv6 /64, and a real user's right password
// from there still signs in (issue 36: 10 unknown emails locked every sign-in from
// the address). On both counting stores.
func TestUnknownEmailsLockNobody(t *testing.T) {
	t.Parallel()
	for name, store := range limitStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := passwordEnvOn(t, store)
			a := env.Tenant("Acme")
			for i := range 20 {
				for _, from := range []string{"198.51.100.7", "2001:db8:1:2::" + strconv.Itoa(i+10)} {
					if res := signIn(env, from, "nobody"+strconv.Itoa(i)+"@example.com", "wrong password"); res.Code != http.StatusUnauthorized {
						t.Fatalf("unknown email %d from %s: %d, want 401", i+1, from, res.Code)
					}
				}
			}
			for _, from := range []string{"198.51.100.7", "2001:db8:1:2:ffff::1"} {
				if res := signIn(env, from, a.Email, a.Password); res.Code != http.StatusCreated {
					t.Errorf("a real user from %s after 20 unknown emails: %d, want 201 %s", from, res.Code, res.Body)
				}
			}
		})
	}
}

// TestAccountFailuresFromAnywhere: 100 wrong passwords for one account, at most
// nine from any one address, and its right password is 429 from any address — the
// 429 saying it is the account's count from all networks — while another account
// signs in. Ninety-nine leave it signing in. On both counting stores.
func TestAccountFailuresFromAnywhere(t *testing.T) {
	t.Parallel()
	for name, store := range limitStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := passwordEnvOn(t, store)
			a, b := env.Tenant("Acme"), env.Tenant("Beta")
			from := func(i int) string { return "198.51.100." + strconv.Itoa(i/9+1) } // 9 per address
			for i := range 99 {
				if res := signIn(env, from(i), a.Email, "wrong password"); res.Code != http.StatusUnauthorized {
					t.Fatalf("wrong password %d: %d, want 401", i+1, res.Code)
				}
			}
			if res := signIn(env, "203.0.113.1", a.Email, a.Password); res.Code != http.StatusCreated {
				t.Fatalf("after 99 wrong passwords from everywhere: %d, want 201 %s", res.Code, res.Body)
			}
			// The 100th; Redis failing open under load may leave a failure or two
			// uncounted, so a few more may be needed.
			var res *httptest.ResponseRecorder
			for i := 99; i < 105; i++ {
				if res := signIn(env, from(i), a.Email, "wrong password"); res.Code != http.StatusUnauthorized {
					t.Fatalf("wrong password %d: %d, want 401", i+1, res.Code)
				}
				if res = signIn(env, "203.0.113.2", a.Email, a.Password); res.Code != http.StatusCreated {
					if i > 99 {
						t.Logf("%d wrong passwords before the 429: the store let some through uncounted", i+1)
					}
					break
				}
			}
			if res.Code != http.StatusTooManyRequests || res.Header().Get("Retry-After") == "" {
				t.Fatalf("after 100 wrong passwords from everywhere: %d (Retry-After %q), want 429 with Retry-After", res.Code, res.Header().Get("Retry-After"))
			}
			if d := detailOf(t, res); !strings.Contains(d, "100 wrong passwords for this account from all networks") {
				t.Errorf("429 detail %q does not say why", d)
			}
			if res := signIn(env, "203.0.113.2", b.Email, b.Password); res.Code != http.StatusCreated {
				t.Errorf("another account from the same address: %d, want 201", res.Code)
			}
		})
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
	for range 9 {
		signIn(env, office, a.Email, "wrong password")
	}
	if res := signIn(env, office, a.Email, a.Password); res.Code != http.StatusTooManyRequests {
		t.Errorf("after ten wrong passwords for the account from the office: %d, want 429", res.Code)
	}
	if err := env.App.Tenants.SetTenantDisabled(context.Background(), a.ID, false); err != nil {
		t.Fatal(err)
	}
}

// TestPasswordChangeFailuresThrottled: ten wrong current passwords at POST
// /v1/me/password, and the eleventh attempt is 429 — the right password included —
// instead of another bcrypt check. The account is the same as sign-in's: a sign-in
// from that network is refused too.
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
	req := httptest.NewRequest("POST", "/v1/sessions", strings.NewReader(`{"email":"`+a.Email+`","password":"`+a.Password+`"}`))
	req.Header.Set("Content-Type", "application/json") // from httptest's address, as the changes
	if code := env.DoRaw(req).Code; code != http.StatusTooManyRequests {
		t.Errorf("sign-in of the account from the same network: %d, want 429", code)
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

// getRisks lists risks with key from client address from.
func getRisks(env *apitest.Env, from, key string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", "/v2/risks", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("X-Forwarded-For", from)
	return env.DoRaw(req).ResponseRecorder
}

// refusedWithin sends bad keys from address from until one is 429, and returns
// it; the test fails if none is within 100. Without a lost count the first is;
// Redis failing open under load (a round trip past its 100 ms, uncounted) may
// leave a few failures uncounted.
func refusedWithin(t *testing.T, env *apitest.Env, from string) *httptest.ResponseRecorder {
	t.Helper()
	for i := range 100 {
		res := getRisks(env, from, "rk_guess-more"+strconv.Itoa(i))
		switch res.Code {
		case http.StatusTooManyRequests:
			if i > 0 {
				t.Logf("%d more bad keys were 401 before the 429: failures the store let through uncounted", i)
			}
			return res
		case http.StatusUnauthorized:
		default:
			t.Fatalf("a bad key: %d, want 401 or 429", res.Code)
		}
	}
	t.Fatal("100 more bad keys after 1000 and none was 429")
	return nil
}

// TestValidKeyWorksAfterBadKeys: 1,000 bad API keys from one address, and another
// tenant's valid key from that address still gets 200 (issue 36: it got 429 for
// 900 s); only the address's further bad keys are refused, 429 saying why, and
// another network's bad key is still just 401. On both counting stores.
func TestValidKeyWorksAfterBadKeys(t *testing.T) {
	t.Parallel()
	for name, store := range limitStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := passwordEnvOn(t, store)
			b := env.Tenant("Beta")
			for i := range 1000 {
				if code := getRisks(env, "198.51.100.7", "rk_guess"+strconv.Itoa(i)).Code; code != http.StatusUnauthorized {
					t.Fatalf("bad key %d: %d, want 401", i, code)
				}
			}
			if code := getRisks(env, "198.51.100.7", b.Key).Code; code != http.StatusOK {
				t.Errorf("a valid key after 1000 bad ones from its address: %d, want 200", code)
			}
			res := refusedWithin(t, env, "198.51.100.7")
			if res.Header().Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
			if d := detailOf(t, res); !strings.Contains(d, "failed authentications from your network") {
				t.Errorf("429 detail %q does not say why", d)
			}
			if code := getRisks(env, "198.51.100.7", b.Key).Code; code != http.StatusOK {
				t.Errorf("the valid key after the address's 429s: %d, want 200", code)
			}
			if code := getRisks(env, "198.51.100.8", "rk_guess-elsewhere").Code; code != http.StatusUnauthorized {
				t.Errorf("a bad key from another network: %d, want 401", code)
			}
		})
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
// 1000 failed authentications from a network on the first, the second refuses
// that network's next bad key (the count is shared), and both let its valid key
// through.
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
	for i := range 1000 {
		if code := getRisks(first, "198.51.100.7", "rk_guess"+strconv.Itoa(i)).Code; code != http.StatusUnauthorized {
			t.Fatalf("bad key %d: %d, want 401", i, code)
		}
	}
	refusedWithin(t, second, "198.51.100.7") // the second counts on from the first's count
	for name, env := range map[string]*apitest.Env{"first": first, "second": second} {
		if code := getRisks(env, "198.51.100.7", a.Key).Code; code != http.StatusOK {
			t.Errorf("%s, the valid key: %d, want 200", name, code)
		}
	}
}

// Wrong passwords sent at once are counted as if sent one after another: each check
// reads the failures recorded before it, so a burst of 15 gets 10 checks and 5
// refusals, not 15 checks (this instance's count in memory).
func TestConcurrentWrongPasswordsCountedInTurn(t *testing.T) {
	t.Parallel()
	// bcrypt's default cost, as served: the check takes long enough for the
	// burst's requests to overlap, as they do against a real server.
	_, proxies, _ := net.ParseCIDR("192.0.2.0/24")
	env := apitest.NewWith(t, app.Options{BcryptCost: bcrypt.DefaultCost}, func(c *config.Config) {
		c.RateLimit.RPS, c.RateLimit.Burst = 0, 0
		c.HTTP.TrustedProxies = []*net.IPNet{proxies}
	})
	// Created through the API, so its hash has the served cost too (env.Tenant's
	// users are hashed at bcrypt.MinCost).
	admin := apitest.Login(t, env, env.Tenant("Acme"))
	member := struct{ Email string }{"burst@example.com"}
	env.Do(apitest.Request{Method: "POST", Path: "/v1/users", Bearer: admin.Token,
		JSON: map[string]string{"email": member.Email, "password": "a long right password", "role": "member"}}).Expect(201)
	var wg sync.WaitGroup
	codes := make(chan int, 15)
	for range 15 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes <- signIn(env, "198.51.100.7", member.Email, "wrong password").Code
		}()
	}
	wg.Wait()
	close(codes)
	got := map[int]int{}
	for c := range codes {
		got[c]++
	}
	if got[http.StatusUnauthorized] != 10 || got[http.StatusTooManyRequests] != 5 {
		t.Fatalf("15 wrong passwords at once: %v, want 10 × 401 and 5 × 429", got)
	}
}
