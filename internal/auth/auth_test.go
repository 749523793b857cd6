package auth_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/config"
)

// secret is the JWT_SECRET of these tests, so they can forge tokens the server
// would otherwise sign.
const secret = "test-secret-0123456789abcdefghijklmnopqrstuvwxyz"

func newEnv(t *testing.T, mods ...func(*config.Config)) *apitest.Env {
	t.Helper()
	return apitest.New(t, append([]func(*config.Config){func(c *config.Config) { c.Auth.JWTSecret = secret }}, mods...)...)
}

func cookie(token string) http.Header { return http.Header{"Cookie": {"session=" + token}} }

func createRisk(t *testing.T, env *apitest.Env, key string) string {
	t.Helper()
	var r struct{ ID string }
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: key, JSON: map[string]any{"title": "t"}}).
		Expect(http.StatusCreated).Decode(&r)
	return r.ID
}

func countRisks(t *testing.T, env *apitest.Env, key string) int {
	t.Helper()
	var p struct{ Data []any }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks", Bearer: key}).Expect(http.StatusOK).Decode(&p)
	return len(p.Data)
}

func TestReadOnlyKey(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	a := env.Tenant("Acme")
	id := createRisk(t, env, a.Key)
	tests := []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/v2/risks", http.StatusOK},
		{http.MethodGet, "/v2/risks/" + id, http.StatusOK},
		{http.MethodPost, "/v2/risks", http.StatusForbidden},
		{http.MethodPatch, "/v2/risks/" + id, http.StatusForbidden},
		{http.MethodPut, "/v2/risks/" + id, http.StatusForbidden},
		{http.MethodDelete, "/v2/risks/" + id, http.StatusForbidden},
		// The scope is checked before anything else about the write.
		{http.MethodPatch, "/v2/risks/risk_0193b2c4d5e67f8091a2b3c4d5e6f708", http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			res := apitest.Do(t, env, apitest.Request{Method: tt.method, Path: tt.path, Bearer: a.ReadKey,
				JSON: map[string]any{"title": "changed"}})
			if tt.want == http.StatusForbidden {
				res.ExpectProblem(http.StatusForbidden, "FORBIDDEN")
				if d := res.Map()["detail"].(string); !strings.Contains(d, "risks:write") {
					t.Errorf("detail %q does not name the missing scope", d)
				}
			} else {
				res.Expect(tt.want)
			}
		})
	}
	var r struct{ Title string }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + id, Bearer: a.Key}).Expect(http.StatusOK).Decode(&r)
	if r.Title != "t" || countRisks(t, env, a.Key) != 1 {
		t.Errorf("refused writes changed something: title %q, %d risks", r.Title, countRisks(t, env, a.Key))
	}
}

func TestRevokedKey(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	a := env.Tenant("Acme")
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks", Bearer: a.ReadKey}).Expect(http.StatusOK)
	if err := env.App.Tenants.RevokeAPIKeyByID(context.Background(), a.ReadKeyID); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		env.Do(apitest.Request{Method: m, Path: "/v2/risks", Bearer: a.ReadKey, JSON: map[string]any{"title": "t"}}).
			ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
	}
	// Revoking one key leaves the tenant's other keys working.
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks", Bearer: a.Key}).Expect(http.StatusOK)
	// Revoking again is harmless and keeps it revoked.
	if err := env.App.Tenants.RevokeAPIKeyByID(context.Background(), a.ReadKeyID); err != nil {
		t.Fatal(err)
	}
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks", Bearer: a.ReadKey}).
		ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
}

// TestRevokedKeyRefusedByEveryInstance: two instances share a database; a key that
// has just written through both is revoked through one, and the other refuses the
// key's very next write (unkeyed: the path that sends the fewest statements) and
// writes nothing. Nothing caches a credential (docs/architecture.md).
func TestRevokedKeyRefusedByEveryInstance(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	twin := env.Twin()
	a := env.Tenant("Acme")
	write := func(e *apitest.Env, title string) *apitest.Response {
		return e.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key,
			JSON: map[string]any{"title": title, "likelihood": 2, "impact": 3}})
	}
	for i := range 3 { // both instances have served the key, more than once
		write(env, fmt.Sprintf("before %d", i)).Expect(http.StatusCreated)
		write(twin, fmt.Sprintf("twin before %d", i)).Expect(http.StatusCreated)
	}
	if err := env.App.Tenants.RevokeAPIKeyByID(context.Background(), a.KeyID); err != nil {
		t.Fatal(err)
	}
	write(twin, "after").ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
	write(env, "after").ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
	if n := countRisks(t, twin, a.ReadKey); n != 6 {
		t.Errorf("%d risks after the refused writes, want the 6 written before", n)
	}
}

func TestBadCredentials(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	a := env.Tenant("Acme")
	s := apitest.Login(t, env, a)
	tests := []struct {
		name   string
		path   string
		header http.Header
	}{
		{"v2 none", "/v2/risks", nil},
		{"v2 empty", "/v2/risks", http.Header{"Authorization": {""}}},
		{"v2 scheme only", "/v2/risks", http.Header{"Authorization": {"Bearer"}}},
		{"v2 scheme and space", "/v2/risks", http.Header{"Authorization": {"Bearer "}}},
		{"v2 basic", "/v2/risks", http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("a:b"))}}},
		{"v2 key with another scheme", "/v2/risks", http.Header{"Authorization": {"Token " + a.Key}}},
		{"v2 garbage", "/v2/risks", http.Header{"Authorization": {"Bearer garbage"}}},
		{"v2 unknown key", "/v2/risks", http.Header{"Authorization": {"Bearer rk_" + strings.Repeat("A", 43)}}},
		{"v2 truncated key", "/v2/risks", http.Header{"Authorization": {"Bearer " + a.Key[:len(a.Key)-1]}}},
		{"v2 overlong key", "/v2/risks", http.Header{"Authorization": {"Bearer " + a.Key + strings.Repeat("x", 300)}}},
		{"v2 session JWT", "/v2/risks", http.Header{"Authorization": {"Bearer " + s.Token}}},
		{"v2 session cookie", "/v2/risks", cookie(s.Token)},
		{"v1 none", "/v1/risks", nil},
		{"v1 garbage", "/v1/risks", http.Header{"Authorization": {"Bearer garbage"}}},
		{"v1 API key", "/v1/risks", http.Header{"Authorization": {"Bearer " + a.Key}}},
		{"v1 API key cookie", "/v1/risks", cookie(a.Key)},
		{"v1 empty cookie", "/v1/risks", cookie("")},
		{"v1 logout without session", "/v1/sessions", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := http.MethodGet
			if tt.path == "/v1/sessions" {
				method = http.MethodDelete
			}
			res := apitest.Do(t, env, apitest.Request{Method: method, Path: tt.path, Header: tt.header}).
				ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
			if h := res.Header().Get("WWW-Authenticate"); !strings.HasPrefix(h, "Bearer ") {
				t.Errorf("401 with WWW-Authenticate %q, want a Bearer challenge (RFC 9110)", h)
			}
			// A credential of the other version says which version it belongs to.
			var p struct{ Detail string }
			res.Decode(&p)
			want := map[string]string{"v2 session JWT": "authenticate /v1", "v1 API key": "authenticate /v2", "v1 API key cookie": "authenticate /v2"}[tt.name]
			if want != "" && !strings.Contains(p.Detail, want) {
				t.Errorf("detail %q, want it to say %q", p.Detail, want)
			}
			if want == "" && strings.Contains(p.Detail, "authenticate /v") {
				t.Errorf("detail %q names the other version for a credential of neither", p.Detail)
			}
		})
	}
}

func TestLoginAndUse(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	a := env.Tenant("Acme")
	before := env.Clock.Now()
	s := apitest.Login(t, env, a)
	after := env.Clock.Now()

	if s.Token == "" || strings.Count(s.Token, ".") != 2 {
		t.Fatalf("token %q is not a JWT", s.Token)
	}
	// Expiry is login time plus the TTL, to the second.
	if s.ExpiresAt.Before(before.Add(auth.SessionTTL-time.Second)) || s.ExpiresAt.After(after.Add(auth.SessionTTL)) {
		t.Errorf("expiresAt %s, want %s after the login at %s", s.ExpiresAt, auth.SessionTTL, before)
	}
	c := s.Cookie
	if c == nil {
		t.Fatal("no session cookie set")
	}
	if c.Value != s.Token || !c.HttpOnly || c.SameSite == http.SameSiteDefaultMode || c.SameSite == http.SameSiteNoneMode {
		t.Errorf("cookie = %+v, want the token, HttpOnly, SameSite Lax or Strict", c)
	}
	if !c.Expires.Equal(s.ExpiresAt) {
		t.Errorf("cookie expires %s, token %s", c.Expires, s.ExpiresAt)
	}
	if c.Path != "/" && c.Path != "/v1" {
		t.Errorf("cookie path %q does not cover /v1", c.Path)
	}

	claims := jwt.MapClaims{}
	if _, err := jwt.ParseWithClaims(s.Token, claims, func(*jwt.Token) (any, error) { return []byte(secret), nil },
		jwt.WithValidMethods([]string{"HS256"})); err != nil {
		t.Fatalf("token is not HS256 with JWT_SECRET: %v", err)
	}
	for _, name := range []string{"sub", "tid", "exp", "iat", "jti"} {
		if _, ok := claims[name]; !ok {
			t.Errorf("token lacks claim %q: %v", name, claims)
		}
	}
	if claims["tid"] != a.ID {
		t.Errorf("tid = %v, want %s", claims["tid"], a.ID)
	}

	for _, via := range []struct {
		name   string
		bearer string
		header http.Header
	}{
		{"bearer", s.Token, nil},
		{"cookie", "", cookie(s.Token)},
		{"bearer with lower-case scheme", "", http.Header{"Authorization": {"bearer " + s.Token}}},
	} {
		t.Run(via.name, func(t *testing.T) {
			var r struct{ ID, Title string }
			apitest.Do(t, env, apitest.Request{Method: http.MethodPost, Path: "/v1/risks", Bearer: via.bearer, Header: via.header,
				JSON: map[string]any{"title": via.name}}).Expect(http.StatusCreated).Decode(&r)
			apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/v1/risks/" + r.ID, Bearer: via.bearer, Header: via.header}).
				Expect(http.StatusOK)
			var p struct{ Data []struct{ ID string } }
			apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/v1/risks", Bearer: via.bearer, Header: via.header}).
				Expect(http.StatusOK).Decode(&p)
			if len(p.Data) == 0 || p.Data[0].ID != r.ID {
				t.Errorf("list does not start with the new risk %s: %+v", r.ID, p.Data)
			}
			// /v1 and /v2 share one register.
			apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + r.ID, Bearer: a.Key}).Expect(http.StatusOK)
		})
	}
	// The email is matched without regard to case.
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/sessions",
		JSON: map[string]string{"email": strings.ToUpper(a.Email), "password": a.Password}}).Expect(http.StatusCreated)
}

func TestLoginRefused(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	a := env.Tenant("Acme")
	tests := []struct {
		name   string
		body   string
		status int
		fields []string
	}{
		{"wrong password", `{"email":"` + a.Email + `","password":"wrong horse battery"}`, 401, nil},
		{"unknown email", `{"email":"nobody@example.com","password":"correct horse battery"}`, 401, nil},
		{"password of another user", `{"email":"x` + a.Email + `","password":"` + a.Password + `"}`, 401, nil},
		{"no email", `{"password":"x"}`, 400, []string{"email"}},
		{"no password", `{"email":"` + a.Email + `"}`, 400, []string{"password"}},
		{"neither", `{}`, 400, []string{"email", "password"}},
		{"wrong types", `{"email":1,"password":2}`, 400, []string{"email", "password"}},
		{"not JSON", `email=a`, 400, []string{"body"}},
		{"empty", ``, 400, []string{"body"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := apitest.Do(t, env, apitest.Request{Method: http.MethodPost, Path: "/v1/sessions", Body: tt.body,
				Header: http.Header{"Content-Type": {"application/json"}}})
			if tt.status == 401 {
				res.ExpectProblem(401, "UNAUTHENTICATED")
			} else {
				res.ExpectProblem(400, "VALIDATION_FAILED")
				var p struct{ Errors []struct{ Field string } }
				res.Decode(&p)
				var named []string
				for _, e := range p.Errors {
					named = append(named, e.Field)
				}
				if !slices.Equal(named, tt.fields) {
					t.Errorf("errors = %+v, want %q named", p.Errors, tt.fields)
				}
			}
			if sc := res.Header().Get("Set-Cookie"); sc != "" {
				t.Errorf("refused login sets a cookie: %s", sc)
			}
		})
	}
}

func TestExpiredSession(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	a := env.Tenant("Acme")
	s := apitest.Login(t, env, a)
	env.Clock.Advance(auth.SessionTTL - time.Minute)
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/risks", Bearer: s.Token}).Expect(http.StatusOK)
	env.Clock.Advance(time.Minute + time.Second)
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/risks", Bearer: s.Token}).
		ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/risks", Header: cookie(s.Token)}).
		ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
	// A fresh login works again.
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/risks", Bearer: apitest.Login(t, env, a).Token}).Expect(http.StatusOK)
}

func TestTamperedSession(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	a, b := env.Tenant("Acme"), env.Tenant("Beta")
	s := apitest.Login(t, env, a)
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/risks", Bearer: s.Token}).Expect(http.StatusOK)

	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(s.Token, claims); err != nil {
		t.Fatal(err)
	}
	with := func(change func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{}
		for k, v := range claims {
			c[k] = v
		}
		change(c)
		return c
	}
	sign := func(m jwt.SigningMethod, key any, c jwt.MapClaims) string {
		tok, err := jwt.NewWithClaims(m, c).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	parts := strings.Split(s.Token, ".")
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	payload := func(c jwt.MapClaims) string {
		tok := sign(jwt.SigningMethodHS256, []byte(secret), c)
		return strings.Split(tok, ".")[1]
	}
	now := env.Clock.Now()
	tests := map[string]string{
		"signature char flipped":   parts[0] + "." + parts[1] + "." + flip(parts[2], 3),
		"signature removed":        parts[0] + "." + parts[1] + ".",
		"payload swapped":          parts[0] + "." + payload(with(func(c jwt.MapClaims) { c["tid"] = b.ID })) + "." + parts[2],
		"signed with another key":  sign(jwt.SigningMethodHS256, []byte("another-secret-0123456789abcdefghijklmn"), claims),
		"alg none":                 sign(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims),
		"HS384 with the right key": sign(jwt.SigningMethodHS384, []byte(secret), claims),
		// Signed with the right key, but the session row disagrees.
		"other tenant in tid": sign(jwt.SigningMethodHS256, []byte(secret), with(func(c jwt.MapClaims) { c["tid"] = b.ID })),
		"other user in sub":   sign(jwt.SigningMethodHS256, []byte(secret), with(func(c jwt.MapClaims) { c["sub"] = "usr_0193b2c4d5e67f8091a2b3c4d5e6f708" })),
		"unknown jti":         sign(jwt.SigningMethodHS256, []byte(secret), with(func(c jwt.MapClaims) { c["jti"] = "0123456789abcdef0123456789abcdef" })),
		"no jti":              sign(jwt.SigningMethodHS256, []byte(secret), with(func(c jwt.MapClaims) { delete(c, "jti") })),
		"no exp":              sign(jwt.SigningMethodHS256, []byte(secret), with(func(c jwt.MapClaims) { delete(c, "exp") })),
		"issued in the future": sign(jwt.SigningMethodHS256, []byte(secret), with(func(c jwt.MapClaims) {
			c["iat"] = now.Add(time.Hour).Unix()
		})),
		"not a JWT": "abc",
	}
	for name, tok := range tests {
		t.Run(name, func(t *testing.T) {
			apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/v1/risks", Bearer: tok}).
				ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
			apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/v1/risks", Header: cookie(tok)}).
				ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
		})
	}
	// The control: re-signing the unchanged claims with the right key is accepted, so
	// each refusal above is due to its one change.
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/risks", Bearer: sign(jwt.SigningMethodHS256, []byte(secret), claims)}).
		Expect(http.StatusOK)

	// A token whose exp was pushed out still ends with its session.
	longer := sign(jwt.SigningMethodHS256, []byte(secret), with(func(c jwt.MapClaims) { c["exp"] = now.Add(1000 * time.Hour).Unix() }))
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/risks", Bearer: longer}).Expect(http.StatusOK)
	env.Clock.Advance(auth.SessionTTL + time.Second)
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/risks", Bearer: longer}).
		ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
}

func TestLogout(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	a := env.Tenant("Acme")
	for _, via := range []string{"bearer", "cookie"} {
		t.Run(via, func(t *testing.T) {
			s, other := apitest.Login(t, env, a), apitest.Login(t, env, a)
			req := apitest.Request{Method: http.MethodDelete, Path: "/v1/sessions"}
			if via == "bearer" {
				req.Bearer = s.Token
			} else {
				req.Header = cookie(s.Token)
			}
			res := apitest.Do(t, env, req).Expect(http.StatusNoContent)
			var cleared bool
			for _, c := range res.Result().Cookies() {
				if c.Name == "session" && c.Value == "" && c.MaxAge < 0 {
					cleared = true
				}
			}
			if !cleared {
				t.Errorf("logout does not clear the cookie: %q", res.Header().Values("Set-Cookie"))
			}
			for _, r := range []apitest.Request{
				{Method: http.MethodGet, Path: "/v1/risks", Bearer: s.Token},
				{Method: http.MethodGet, Path: "/v1/risks", Header: cookie(s.Token)},
				{Method: http.MethodPost, Path: "/v1/risks", Bearer: s.Token, JSON: map[string]any{"title": "t"}},
				{Method: http.MethodDelete, Path: "/v1/sessions", Bearer: s.Token},
			} {
				apitest.Do(t, env, r).ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
			}
			// Other sessions of the same user live on.
			apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/v1/risks", Bearer: other.Token}).Expect(http.StatusOK)
		})
	}
}

func TestCrossSiteCookieWrites(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	a := env.Tenant("Acme")
	s := apitest.Login(t, env, a)
	id := createRisk(t, env, a.Key)
	crossSite := http.Header{"Sec-Fetch-Site": {"cross-site"}}
	sameSite := http.Header{"Sec-Fetch-Site": {"same-site"}} // a sibling subdomain is another origin
	foreign := http.Header{"Origin": {"https://evil.example"}}
	merge := func(hs ...http.Header) http.Header {
		out := http.Header{}
		for _, h := range hs {
			for k, v := range h {
				out[k] = v
			}
		}
		return out
	}
	tests := []struct {
		name   string
		req    apitest.Request
		status int
	}{
		{"cookie POST cross-site", apitest.Request{Method: "POST", Path: "/v1/risks", Header: merge(cookie(s.Token), crossSite)}, 403},
		{"cookie POST same-site", apitest.Request{Method: "POST", Path: "/v1/risks", Header: merge(cookie(s.Token), sameSite)}, 403},
		{"cookie POST foreign Origin", apitest.Request{Method: "POST", Path: "/v1/risks", Header: merge(cookie(s.Token), foreign)}, 403},
		{"cookie PATCH cross-site", apitest.Request{Method: "PATCH", Path: "/v1/risks/" + id, Header: merge(cookie(s.Token), crossSite)}, 403},
		{"cookie PUT cross-site", apitest.Request{Method: "PUT", Path: "/v1/risks/" + id, Header: merge(cookie(s.Token), crossSite)}, 403},
		{"cookie DELETE cross-site", apitest.Request{Method: "DELETE", Path: "/v1/risks/" + id, Header: merge(cookie(s.Token), crossSite)}, 403},
		{"cookie logout cross-site", apitest.Request{Method: "DELETE", Path: "/v1/sessions", Header: merge(cookie(s.Token), crossSite)}, 403},
		{"cookie GET cross-site", apitest.Request{Method: "GET", Path: "/v1/risks", Header: merge(cookie(s.Token), crossSite)}, 200},
		{"cookie POST same-origin", apitest.Request{Method: "POST", Path: "/v1/risks", Header: merge(cookie(s.Token), http.Header{"Sec-Fetch-Site": {"same-origin"}})}, 201},
		{"cookie POST own Origin", apitest.Request{Method: "POST", Path: "/v1/risks", Header: merge(cookie(s.Token), http.Header{"Origin": {"http://example.com"}})}, 201},
		{"cookie POST without browser headers", apitest.Request{Method: "POST", Path: "/v1/risks", Header: cookie(s.Token)}, 201},
		{"bearer POST cross-site", apitest.Request{Method: "POST", Path: "/v1/risks", Bearer: s.Token, Header: crossSite}, 201},
		{"bearer POST foreign Origin", apitest.Request{Method: "POST", Path: "/v1/risks", Bearer: s.Token, Header: foreign}, 201},
		{"bearer and cookie POST cross-site", apitest.Request{Method: "POST", Path: "/v1/risks", Bearer: s.Token, Header: merge(cookie(s.Token), crossSite)}, 201},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := countRisks(t, env, a.Key)
			tt.req.JSON = map[string]any{"title": "csrf " + tt.name}
			res := apitest.Do(t, env, tt.req)
			if tt.status == 403 {
				res.ExpectProblem(403, "FORBIDDEN")
				if after := countRisks(t, env, a.Key); after != before {
					t.Errorf("refused write changed the risk count %d → %d", before, after)
				}
			} else {
				res.Expect(tt.status)
			}
		})
	}
	// The refused cross-site logout did not end the session.
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/risks", Bearer: s.Token}).Expect(http.StatusOK)
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + id, Bearer: a.Key}).Expect(http.StatusOK)
}

// TestSessionTenant: a session acts in its own user's tenant only.
func TestSessionTenant(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	a, b := env.Tenant("Acme"), env.Tenant("Beta")
	var r struct{ ID string }
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/risks", Bearer: apitest.Login(t, env, b).Token,
		JSON: map[string]any{"title": "beta"}}).Expect(http.StatusCreated).Decode(&r)
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + r.ID, Bearer: b.Key}).Expect(http.StatusOK)
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + r.ID, Bearer: a.Key}).ExpectProblem(404, "NOT_FOUND")
}
