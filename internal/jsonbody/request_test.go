package jsonbody_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/reqbody"
)

// TestIsJSON pins the one media-type rule both the fingerprint and the handlers use.
func TestIsJSON(t *testing.T) {
	t.Parallel()
	for ct, want := range map[string]bool{
		"": true, "application/json": true, "application/json; charset=utf-8": true,
		"APPLICATION/JSON": true, "application/merge-patch+json": true, "application/problem+json; x=y": true,
		"text/plain": false, "application/jsonx": false, "multipart/form-data; boundary=b": false,
		"application/json; charset": false, // does not parse
	} {
		req := httptest.NewRequest(http.MethodPost, "/", nil)
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		if got := jsonbody.IsJSON(req); got != want {
			t.Errorf("IsJSON(%q) = %v, want %v", ct, got, want)
		}
	}
}

// TestDecodeRequestSharesTheRead: after the fingerprint's reqbody.Read, the handler
// decodes the memoised bytes; a non-JSON body is refused without being read.
func TestDecodeRequestSharesTheRead(t *testing.T) {
	t.Parallel()
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"name":"a","count":2.0}`))
	if _, err := reqbody.Read(req, 1<<20); err != nil {
		t.Fatal(err)
	}
	var got target
	if err := jsonbody.DecodeRequest(req, &got); err != nil || *got.Name != "a" || *got.Count != 2 {
		t.Fatalf("DecodeRequest = %+v, %v", got, err)
	}

	req = httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"name":"a"}`))
	req.Header.Set("Content-Type", "text/plain")
	err := jsonbody.DecodeRequest(req, &got)
	if p := problem.As(err); p == nil || p.Errors[0].Field != "Content-Type" {
		t.Fatalf("DecodeRequest(text/plain) = %v, want VALIDATION_FAILED naming Content-Type", err)
	}
}

// TestDeepBodyNamesAShortField: a body nested thousands deep is refused naming a
// field cut short, not its whole path (which was answered twice, 40 KB of the
// client's own input), whether the decoder or the fingerprint's canonical form
// finds it.
func TestDeepBodyNamesAShortField(t *testing.T) {
	t.Parallel()
	const depth = 10000
	body := []byte(`{"title":"t","metadata":` + strings.Repeat(`{"a":`, depth) + `"x"` + strings.Repeat("}", depth) + `}`)
	var v struct {
		Title    string            `json:"title"`
		Metadata map[string]string `json:"metadata"`
	}
	_, canonErr := jsonbody.Canonical(nil, body)
	for name, err := range map[string]error{"Unmarshal": jsonbody.Unmarshal(body, &v), "Canonical": canonErr} {
		p := problem.As(err)
		if p == nil || len(p.Errors) == 0 {
			t.Fatalf("%s: %v, want VALIDATION_FAILED", name, err)
		}
		f := p.Errors[0].Field
		if !strings.HasPrefix(f, "metadata/a/") || !strings.HasSuffix(f, "/…") || len(f) > 125 {
			t.Errorf("%s: field %q (%d bytes), want metadata/a/…/… cut to about 120 bytes", name, f, len(f))
		}
		if len(p.Detail) > 1024 {
			t.Errorf("%s: detail of %d bytes: %.200s…", name, len(p.Detail), p.Detail)
		}
	}
}
