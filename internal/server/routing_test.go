package server_test

import (
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
)

func TestKnownPathWithAnotherMethodIs405(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	for _, r := range []apitest.Request{
		{Method: "PATCH", Path: "/v2/risks", Bearer: a.Key, Body: `{}`},
		{Method: "DELETE", Path: "/v1/risks"},
		{Method: "POST", Path: "/healthz"},
	} {
		res := env.Do(r).ExpectProblem(405, "METHOD_NOT_ALLOWED")
		if res.Header().Get("Allow") == "" {
			t.Errorf("%s %s: 405 without Allow", r.Method, r.Path)
		}
	}
	env.Do(apitest.Request{Method: "GET", Path: "/v2/no-such-thing", Bearer: a.Key}).ExpectProblem(404, "NOT_FOUND")
}

func TestHeadIsGetWithoutABody(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	for _, r := range []apitest.Request{
		{Method: "HEAD", Path: "/healthz"},
		{Method: "HEAD", Path: "/v2/risks", Bearer: a.Key},
		{Method: "HEAD", Path: "/v2/risks", Bearer: a.ReadKey},
	} {
		res := env.Do(r).Expect(200)
		if res.Body.Len() != 0 || res.Header().Get("Content-Type") == "" {
			t.Errorf("HEAD %s: body %q, Content-Type %q", r.Path, res.Body, res.Header().Get("Content-Type"))
		}
	}
	env.Do(apitest.Request{Method: "HEAD", Path: "/v2/risks"}).Expect(401)
}

// TestOptionsAllowMatchesThe405s: OPTIONS and a 405 list the same methods for a
// path, HEAD included wherever GET is (every GET route answers HEAD); no cache
// keeps an OPTIONS answer.
func TestOptionsAllowMatchesThe405s(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	for _, path := range []string{"/v2/risks", "/v1/risks", "/healthz"} {
		h := env.Do(apitest.Request{Method: "OPTIONS", Path: path, Bearer: a.Key}).Expect(204).Header()
		// As docs/openapi.yaml says (security: []): no credential is needed to ask.
		if anon := env.Do(apitest.Request{Method: "OPTIONS", Path: path}).Expect(204).Header().Get("Allow"); anon != h.Get("Allow") {
			t.Errorf("OPTIONS %s without a credential: Allow %q, want %q", path, anon, h.Get("Allow"))
		}
		if cc := h.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("OPTIONS %s: Cache-Control %q, want no-store", path, cc)
		}
		opts := h.Get("Allow")
		refused := env.Do(apitest.Request{Method: "PUT", Path: path, Bearer: a.Key, Body: `{}`}).ExpectProblem(405, "METHOD_NOT_ALLOWED").Header().Get("Allow")
		if opts != refused || !strings.Contains(opts, "HEAD") {
			t.Errorf("%s: OPTIONS Allow %q, 405 Allow %q; want the same, with HEAD", path, opts, refused)
		}
	}
}
