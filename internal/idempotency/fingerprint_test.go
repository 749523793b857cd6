package idempotency

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/problem"
)

func fingerprint(t *testing.T, f *Fingerprinter, method, target, contentType, body string) string {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	c := echo.New().NewContext(req, httptest.NewRecorder())
	fp, err := f.Fingerprint(c, HashKeep)
	if err != nil {
		t.Fatalf("Fingerprint(%s %s %q): %v", method, target, body, err)
	}
	// The handler must still be able to read the body.
	rest, _ := io.ReadAll(c.Request().Body)
	if string(rest) != body {
		t.Fatalf("body left for the handler = %q, want %q", rest, body)
	}
	return fp
}

func TestFingerprintEqualities(t *testing.T) {
	f := &Fingerprinter{}
	const j = "application/json"
	type req struct{ method, target, ct, body string }
	same := []struct {
		name string
		a, b req
	}{
		{"charset parameter", req{"POST", "/r", j, `{"a":1}`}, req{"POST", "/r", "application/json; charset=utf-8", `{"a":1}`}},
		{"canonical JSON", req{"POST", "/r", j, `{"a":1,"b":"x"}`}, req{"POST", "/r", j, `{ "b" : "x", "a" : 1.0 }`}},
		{"query order across names", req{"POST", "/r?a=1&b=2", j, `{}`}, req{"POST", "/r?b=2&a=1", j, `{}`}},
		{"query escaping", req{"POST", "/r?q=a%20b", j, `{}`}, req{"POST", "/r?q=a+b", j, `{}`}},
		{"+json media type", req{"POST", "/r", "application/merge-patch+json", `{"a":1}`}, req{"POST", "/r", j, `{"a":1}`}},
	}
	for _, tc := range same {
		t.Run(tc.name, func(t *testing.T) {
			a := fingerprint(t, f, tc.a.method, tc.a.target, tc.a.ct, tc.a.body)
			b := fingerprint(t, f, tc.b.method, tc.b.target, tc.b.ct, tc.b.body)
			if a != b {
				t.Fatalf("fingerprints differ")
			}
		})
	}
	differ := []struct {
		name string
		a, b req
	}{
		{"method", req{"POST", "/r", j, `{}`}, req{"PUT", "/r", j, `{}`}},
		{"path", req{"POST", "/r/1", j, `{}`}, req{"POST", "/r/2", j, `{}`}},
		{"query value order within a name", req{"POST", "/r?a=1&a=2", j, `{}`}, req{"POST", "/r?a=2&a=1", j, `{}`}},
		{"empty vs {}", req{"POST", "/r", j, ``}, req{"POST", "/r", j, `{}`}},
		{"{} vs null", req{"POST", "/r", j, `{}`}, req{"POST", "/r", j, `null`}},
		{"empty vs null", req{"POST", "/r", j, ``}, req{"POST", "/r", j, `null`}},
		{"other media types by bytes", req{"POST", "/r", "text/plain", `{"a":1}`}, req{"POST", "/r", "text/plain", `{"a": 1}`}},
		{"JSON vs the same bytes as text", req{"POST", "/r", j, `{"a":1}`}, req{"POST", "/r", "text/plain", `{"a":1}`}},
	}
	for _, tc := range differ {
		t.Run(tc.name, func(t *testing.T) {
			a := fingerprint(t, f, tc.a.method, tc.a.target, tc.a.ct, tc.a.body)
			b := fingerprint(t, f, tc.b.method, tc.b.target, tc.b.ct, tc.b.body)
			if a == b {
				t.Fatalf("fingerprints equal")
			}
		})
	}
}

func TestFingerprintRejects(t *testing.T) {
	f := &Fingerprinter{MaxBodyBytes: 16}
	cases := []struct {
		name, ct, body string
		want           problem.Code
	}{
		{"duplicate names", "application/json", `{"a":1,"a":2}`, problem.ValidationFailed},
		{"lone surrogate", "application/json", `"\udc00"`, problem.ValidationFailed},
		{"too large", "application/json", `{"a":"0123456789abcdef"}`, problem.PayloadTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/r", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", tc.ct)
			_, err := f.Fingerprint(echo.New().NewContext(req, httptest.NewRecorder()), HashKeep)
			if p := problem.As(err); p == nil || p.Code != tc.want {
				t.Fatalf("error = %v, want %s", err, tc.want)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	cases := []struct {
		name   string
		values []string
		want   keyStatus
		key    string
	}{
		{"absent", nil, keyAbsent, ""},
		{"8 characters", []string{"abcdefgh"}, keyValid, "abcdefgh"},
		{"128 characters", []string{strings.Repeat("k", 128)}, keyValid, strings.Repeat("k", 128)},
		{"surrounding spaces trimmed", []string{"  key-1234.x_y  "}, keyValid, "key-1234.x_y"},
		{"7 characters", []string{"abcdefg"}, keyInvalid, ""},
		{"129 characters", []string{strings.Repeat("k", 129)}, keyInvalid, ""},
		{"inner space", []string{"abcd efgh"}, keyInvalid, ""},
		{"non-ASCII", []string{"clé-12345"}, keyInvalid, ""},
		{"empty", []string{""}, keyInvalid, ""},
		{"two headers", []string{"abcdefgh", "abcdefgh"}, keyInvalid, ""},
		{"comma list", []string{"abcdefgh, ijklmnop"}, keyInvalid, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tc.values {
				h.Add("idempotency-key", v) // the name is case-insensitive
			}
			key, st := parseKey(h)
			if st != tc.want || key != tc.key {
				t.Fatalf("parseKey = (%q, %v), want (%q, %v)", key, st, tc.key, tc.want)
			}
		})
	}
}

// TestFingerprintsStoredBeforeStillMatch: records stored by earlier releases keep
// their fingerprints (keyed values computed when fingerprints became keyed, under
// this key; migration 0012 erased the unkeyed ones before), so a deploy never turns
// a retry into a 422.
func TestFingerprintsStoredBeforeStillMatch(t *testing.T) {
	f := &Fingerprinter{Key: []byte("a fixed fingerprint key for this test")}
	for _, tc := range []struct{ method, target, ct, body, want string }{
		{"POST", "/v2/risks?b=2&a=1", "application/json; charset=utf-8",
			`{"title":"T","likelihood":3.0,"impact":2e0,"x":[-0.0500,1e400,"\u00e9"]}`,
			"46add51e1b15ec8c8abf8cc28a5764e9be88ca68e1a47007597fe3e99ecc651c"},
		{"PATCH", "/v2/risks/r1", "", `null`, "d85c8d2cbb86df38d42b57a162a10797f9005ac1a690942ed6ceeda748e66c85"},
		{"DELETE", "/v2/risks/r1", "", ``, "b46d92d3def1c2a42b6672f0759f19c9f10656317bbe57b5e1d18c0af6d3ce77"},
		{"POST", "/r", "text/plain", `{"a": 1}`, "b0f8647f48b97a0c070c258da3f4de37964bd31cb2a72e660f21206501c8a885"},
	} {
		if got := fingerprint(t, f, tc.method, tc.target, tc.ct, tc.body); got != tc.want {
			t.Errorf("%s %s %q: fingerprint %s, stored records have %s", tc.method, tc.target, tc.body, got, tc.want)
		}
	}
}
