package apitest

import (
	"net/http"
	"testing"
	"time"
)

// Do sends r through env's router and reports failures on t. (env.Do reports on
// env.T, the test that made env, which may be a parent of t.)
func Do(t testing.TB, env *Env, r Request) *Response {
	t.Helper()
	res := env.Do(r)
	res.T = t
	return res
}

// Session is a signed-in user of /v1.
type Session struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expiresAt"`
	// Cookie is the session cookie the sign-in set.
	Cookie *http.Cookie `json:"-"`
}

// Login signs tenant's user in at POST /v1/sessions, failing t unless that answers
// 201 with a token and the session cookie.
func Login(t testing.TB, env *Env, tenant *Tenant) Session {
	t.Helper()
	return LoginAs(t, env, tenant.Email, tenant.Password)
}

// LoginAs signs in with email and password, as Login does.
func LoginAs(t testing.TB, env *Env, email, password string) Session {
	t.Helper()
	res := Do(t, env, Request{Method: http.MethodPost, Path: "/v1/sessions",
		JSON: map[string]string{"email": email, "password": password}}).Expect(http.StatusCreated)
	var s Session
	res.Decode(&s)
	for _, c := range res.Result().Cookies() {
		if c.Name == "session" {
			s.Cookie = c
		}
	}
	if s.Token == "" || s.Cookie == nil {
		t.Fatalf("sign-in answered %s without a token or cookie", res.Body.String())
	}
	return s
}
