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
