package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
)

// /v2 authenticates by API key alone and never reads a cookie: a browser's cookie
// with invalid UTF-8 beside a valid key must not refuse the request. On /v1, whose
// session may come from the cookie, the same cookie is a 400 naming Cookie.
func TestCookieIsCheckedOnlyWhereItIsRead(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	bad := http.Header{"Cookie": {"theme=caf\xc3"}}
	env.Do(apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key, Header: bad}).Expect(http.StatusOK)
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"t"}`, Header: bad}).Expect(http.StatusCreated)
	res := env.Do(apitest.Request{Method: "GET", Path: "/v1/me", Header: bad}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	if !strings.Contains(res.Body.String(), `"field":"Cookie"`) {
		t.Errorf("/v1: %s, want the Cookie header named", res.Body)
	}
}

// A problem names where bad bytes were, never echoing them: a field name, a CSV
// column or a form field holding a NUL is shown without it (a client that logs
// the answer, or a terminal that prints it, gets no NUL from riskapi).
func TestProblemsDoNotEchoTheBadBytesTheyRefuse(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	csvBody, csvType := apitest.Multipart("", apitest.FilePart("file", "r.csv", "text/csv", "title,ti\x00tle\nx,y\n"))
	formBody, formType := apitest.Multipart("", apitest.FilePart("fi\x00le", "r.csv", "text/csv", "title\nx\n"))
	for _, r := range []apitest.Request{
		{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"ti\u0000tle":"x"}`},
		{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"x","metadata":{"k\u0000":"v"}}`},
		{Method: "POST", Path: "/v2/risks/import", Bearer: a.Key, Body: string(csvBody), Header: http.Header{"Content-Type": {csvType}}},
		{Method: "POST", Path: "/v2/risks/import", Bearer: a.Key, Body: string(formBody), Header: http.Header{"Content-Type": {formType}}},
	} {
		res := env.Do(r)
		if res.Code != http.StatusBadRequest {
			t.Errorf("%s %.40q: %d %s, want 400", r.Path, r.Body, res.Code, res.Body)
		}
		// (A detail may name the character as text: "\\u0000" in the JSON.)
		if b := strings.ReplaceAll(res.Body.String(), `\\u0000`, ""); strings.Contains(b, `\u0000`) || strings.ContainsRune(b, 0) {
			t.Errorf("%s %.40q: the problem echoes the NUL: %s", r.Path, r.Body, b)
		}
	}
	if riskCount(t, env, a.ID) != 0 {
		t.Fatal("a refused request stored a risk")
	}
}

// A NUL in a multipart part's header is a 400 that says a part header is
// malformed, not that the body ended early (it did not: the client would resend
// the same bytes).
func TestNULInAPartHeaderIsNamed(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	for _, header := range []string{
		"Content-Disposition: form-data; name=\"fi\x00le\"; filename=\"r.csv\"",
		"X-Note: a\x00b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"r.csv\"",
	} {
		body := "--b\r\n" + header + "\r\nContent-Type: text/csv\r\n\r\ntitle\nx\n\r\n--b--\r\n"
		res := env.Do(apitest.Request{Method: "POST", Path: "/v2/risks/import", Bearer: a.Key, Body: body,
			Header: http.Header{"Content-Type": {"multipart/form-data; boundary=b"}}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
		b := res.Body.String()
		if strings.Contains(b, "ended early") || !strings.Contains(b, "part header") {
			t.Errorf("%q: %s, want the malformed part header named", header, b)
		}
		if strings.Contains(b, `\u0000`) {
			t.Errorf("%q: the problem echoes the NUL: %s", header, b)
		}
	}
}

// A query string net/url cannot parse loses the pair it cannot read: without the
// check, `status=closed;x` listed every risk (the filter dropped) and `limit=1;`
// a whole page. Each is a 400 naming the query, on a read and on a keyed write
// alike, and the write stores nothing.
func TestUnparsedQueryIsRefused(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"open one"}`}).Expect(http.StatusCreated)
	for _, q := range []string{"status=closed;x", "limit=1;", "sta%tus=closed", "q=50%", "status=closed&x;y=1"} {
		res := env.Do(apitest.Request{Method: "GET", Path: "/v2/risks?" + q, Bearer: a.Key}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
		if !strings.Contains(res.Body.String(), `"field":"query"`) {
			t.Errorf("?%s: %s, want the query named", q, res.Body)
		}
	}
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks?x;y", Bearer: a.Key, Body: `{"title":"second"}`,
		Header: http.Header{"Idempotency-Key": {"k-unparsed"}}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	if n := riskCount(t, env, a.ID); n != 1 {
		t.Fatalf("%d risks, want the one made before: a refused write stored one", n)
	}
	// What does parse still works: an encoded ";" and "%" are a value's bytes.
	env.Do(apitest.Request{Method: "GET", Path: "/v2/risks?q=a%3Bb%25", Bearer: a.Key}).Expect(http.StatusOK)
}
