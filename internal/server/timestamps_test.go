package server_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
)

// timestampShape is an RFC 3339 UTC time with up to six fractional digits: the one
// precision of every timestamp in the API (docs/openapi.yaml).
var timestampShape = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$`)

// TestOneTimestampPrecision: every time the API returns — API keys (created, used,
// revoked), users, tenants' resources, risks, the key inspector — is to the
// microsecond at most, whichever store; the clock has nanoseconds.
func TestOneTimestampPrecision(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	admin := apitest.Login(t, env, a).Token
	do := func(method, path, bearer string, body any, hdr http.Header) string {
		t.Helper()
		res := env.Do(apitest.Request{Method: method, Path: path, Bearer: bearer, JSON: body, Header: hdr})
		if res.Code >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, res.Code, res.Body.String())
		}
		return res.Body.String()
	}
	var key struct{ ID, Key string }
	var bodies []string
	for range 3 {
		b := do("POST", "/v1/api-keys", admin, map[string]any{"name": "ci", "scopes": []string{"risks:read"}}, nil)
		json.Unmarshal([]byte(b), &key)
		bodies = append(bodies, b)
	}
	do("GET", "/v2/risks", key.Key, nil, nil) // lastUsedAt
	do("DELETE", "/v1/api-keys/"+key.ID, admin, nil, nil)
	bodies = append(bodies,
		do("POST", "/v1/users", admin, map[string]string{"email": "new@example.com", "password": "password123", "role": "member"}, nil),
		do("POST", "/v2/risks", a.Key, map[string]any{"title": "t"}, http.Header{"Idempotency-Key": {"precision-1"}}),
		do("GET", "/v1/api-keys", admin, nil, nil), do("GET", "/v1/users", admin, nil, nil), do("GET", "/v1/me", admin, nil, nil),
		do("GET", "/v2/idempotency-keys/precision-1?method=POST&path=/v2/risks", a.Key, nil, nil))
	seen := 0
	for _, b := range bodies {
		var v any
		if err := json.Unmarshal([]byte(b), &v); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		walkStrings(v, func(s string) {
			if len(s) < 20 || s[4] != '-' || !strings.Contains(s, "T") || !strings.HasSuffix(s, "Z") {
				return // not a time
			}
			seen++
			if !timestampShape.MatchString(s) {
				t.Errorf("timestamp %s is not RFC 3339 UTC to the microsecond, in %s", s, b)
			}
		})
	}
	if seen < 12 {
		t.Errorf("only %d timestamps checked", seen)
	}
}

// walkStrings calls f on every string in v, a decoded JSON value.
func walkStrings(v any, f func(string)) {
	switch v := v.(type) {
	case string:
		f(v)
	case []any:
		for _, e := range v {
			walkStrings(e, f)
		}
	case map[string]any:
		for _, e := range v {
			walkStrings(e, f)
		}
	}
}
