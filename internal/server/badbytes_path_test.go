package server_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
)

// A NUL byte or invalid UTF-8 in a path parameter (an id, a key, a source) of any
// operation in docs/openapi.yaml is 400 VALIDATION_FAILED naming the parameter, on
// either store, keyed or not (issue 36: "no 500 for any NUL or invalid UTF-8
// anywhere"; on PostgreSQL a keyed write recorded the path with its key, SQLSTATE
// 22021, and was 503 STORE_UNAVAILABLE).
func TestBadBytesInPathParametersAreValidationErrors(t *testing.T) {
	t.Parallel()
	doc := loadSpec(t)
	env := apitest.New(t)
	a := env.Tenant("Acme")
	session := apitest.Login(t, env, a)
	param := regexp.MustCompile(`\{[^}]+\}`)
	tried := 0
	for path, item := range doc.Paths.Map() {
		if !param.MatchString(path) {
			continue
		}
		for method := range item.Operations() {
			bearer := a.Key
			if strings.HasPrefix(path, "/v1/") {
				bearer = session.Token
			}
			for _, bad := range []string{"%00", "a%00b", "%FF", "caf%C3"} {
				tried++
				req := apitest.Request{Method: method, Path: param.ReplaceAllString(path, bad), Bearer: bearer,
					Header: idemKey("bad-path-" + strconv.Itoa(tried))}
				if method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
					req.Body = `{}`
				}
				res := apitest.Do(t, env, req)
				if method == http.MethodHead {
					if res.Code != http.StatusBadRequest {
						t.Errorf("%s %s: %d, want 400", method, req.Path, res.Code)
					}
					continue
				}
				if res.Code != http.StatusBadRequest || res.ProblemCode() != "VALIDATION_FAILED" {
					t.Errorf("%s %s: %d %.300s, want 400 VALIDATION_FAILED", method, req.Path, res.Code, res.Body)
					continue
				}
				var body struct {
					Errors []struct{ Field string } `json:"errors"`
				}
				res.Decode(&body)
				want := strings.Trim(param.FindString(path), "{}")
				if method == http.MethodOptions { // answered for every path, with no parameters
					want = "path"
				}
				if len(body.Errors) != 1 || body.Errors[0].Field != want {
					t.Errorf("%s %s: errors %+v, want %q named", method, req.Path, body.Errors, want)
				}
			}
		}
	}
	if tried < 40 {
		t.Fatalf("only %d requests tried: the spec's path parameters were not found", tried)
	}
}
