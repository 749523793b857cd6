package server_test

import (
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
)

// PostgreSQL text cannot hold U+0000. JSON can; such input must be a 400 naming the
// field on every store, never a 500 from one of them.
func TestNULInTextIsAValidationError(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	cases := []struct {
		req   apitest.Request
		field string
	}{
		{apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"nul\u0000byte"}`}, "title"},
		{apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"ok","owner":"\u0000"}`, Header: idemKey("nul-owner-1")}, "owner"},
		{apitest.Request{Method: "POST", Path: "/v1/sessions", Body: `{"email":"demo\u0000@riskapi.local","password":"whatever-it-is"}`}, "email"},
	}
	for _, tc := range cases {
		res := env.Do(tc.req).ExpectProblem(400, "VALIDATION_FAILED")
		var body struct {
			Errors []struct{ Field string } `json:"errors"`
		}
		res.Decode(&body)
		if len(body.Errors) != 1 || body.Errors[0].Field != tc.field {
			t.Errorf("%s %s: errors %+v, want the field %q named", tc.req.Method, tc.req.Path, body.Errors, tc.field)
		}
	}
	if riskCount(t, env, a.ID) != 0 {
		t.Fatal("a refused request stored a risk")
	}
	// An escaped backslash followed by u0000 is ordinary text.
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"a\\u0000b"}`}).Expect(201)
}
