package server_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
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

// Every query parameter of every operation in docs/openapi.yaml, given a NUL byte or
// invalid UTF-8, is a 400 naming that parameter — on both stores, where PostgreSQL
// would refuse the text with SQLSTATE 22021 and SQLite would search or store it.
func TestBadBytesInQueryParametersAreValidationErrors(t *testing.T) {
	t.Parallel()
	doc := loadSpec(t)
	env := apitest.New(t)
	a := env.Tenant("Acme")
	session := apitest.Login(t, env, a)
	id := strings.NewReplacer("{id}", "risk_00000000000000000000000000", "{key}", "k1", "{source}", "src")
	tried := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			var params []string
			for _, p := range append(item.Parameters, op.Parameters...) {
				if p.Value != nil && p.Value.In == "query" {
					params = append(params, p.Value.Name)
				}
			}
			bearer := a.Key
			if strings.HasPrefix(path, "/v1/") {
				bearer = session.Token
			}
			for _, name := range params {
				for _, bad := range []string{"%00", "a%00b", "%FF", "caf%C3"} {
					tried++
					req := apitest.Request{Method: method, Path: id.Replace(path) + "?" + url.QueryEscape(name) + "=" + bad,
						Bearer: bearer, Header: idemKey("bad-bytes-" + strconv.Itoa(tried))}
					res := apitest.Do(t, env, req)
					if method == http.MethodHead { // no body to name it in
						if res.Code != http.StatusBadRequest {
							t.Errorf("%s %s: %d, want 400", method, req.Path, res.Code)
						}
						continue
					}
					if res.Code != http.StatusBadRequest || res.ProblemCode() != "VALIDATION_FAILED" {
						t.Errorf("%s %s: %d %s, want 400 VALIDATION_FAILED", method, req.Path, res.Code, res.Body)
						continue
					}
					var body struct {
						Errors []struct{ Field string } `json:"errors"`
					}
					res.Decode(&body)
					if len(body.Errors) != 1 || body.Errors[0].Field != name {
						t.Errorf("%s %s: errors %+v, want %q named", method, req.Path, body.Errors, name)
					}
				}
			}
		}
	}
	if tried < 40 {
		t.Fatalf("only %d requests tried: the spec's query parameters were not found", tried)
	}
	// Good text in the same parameter is searched, not refused.
	env.Do(apitest.Request{Method: "GET", Path: "/v2/risks?q=caf%C3%A9", Bearer: a.Key}).Expect(200)
}

// A header riskapi reads, with invalid UTF-8 in it, is a 400 naming the header
// (net/http itself refuses a NUL in any header); Idempotency-Key keeps its own code.
func TestBadBytesInReadHeadersAreValidationErrors(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"t"}`,
		Header: idemKey("caf\xc3-key-1")}).ExpectProblem(400, "IDEMPOTENCY_KEY_INVALID")
	for _, h := range []string{"If-Match", "Riskapi-Author"} {
		res := env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"t"}`,
			Header: http.Header{h: {"caf\xc3"}}}).ExpectProblem(400, "VALIDATION_FAILED")
		var body struct {
			Errors []struct{ Field string } `json:"errors"`
		}
		res.Decode(&body)
		if len(body.Errors) != 1 || body.Errors[0].Field != h {
			t.Errorf("%s: errors %+v, want the header named", h, body.Errors)
		}
	}
	if riskCount(t, env, a.ID) != 0 {
		t.Fatal("a refused request stored a risk")
	}
}
