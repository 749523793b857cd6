package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
)

func TestBodiesMustBeJSONAndTitlesNotBlank(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	// The handler reads JSON only, as the fingerprint counts it: a text/plain body
	// would be fingerprinted by its bytes but read as JSON.
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"T"}`,
		Header: http.Header{"Content-Type": {"text/plain"}}}).ExpectProblem(400, "VALIDATION_FAILED")
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"T"}`,
		Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}}).Expect(201)
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"   "}`}).ExpectProblem(400, "VALIDATION_FAILED")
	// Invisible characters alone are blank too: such a title lists as a link nobody can see.
	for _, title := range []string{"\u200b", " \u2060\ufeff ", "\u200b\u00a0"} {
		res := env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]string{"title": title}})
		res.ExpectProblem(400, "VALIDATION_FAILED")
		if !strings.Contains(res.Body.String(), "must not be blank") {
			t.Errorf("title %q: %s, want it named blank", title, res.Body)
		}
	}
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]string{"title": "\u200bFlood"}}).Expect(201)
	if n := riskCount(t, env, a.ID); n != 2 {
		t.Fatalf("%d risks, want 1", n)
	}
}
