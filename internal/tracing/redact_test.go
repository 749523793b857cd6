package tracing

import (
	"reflect"
	"testing"

	"go.opentelemetry.io/otel/attribute"
)

// TestRedactAttributes: a whole URL keeps only its origin, whatever it carried
// (user info, a secret path, a query, a fragment); url.query and an unparsable URL
// are left out; every other attribute is kept as it was, in order.
func TestRedactAttributes(t *testing.T) {
	tests := []struct {
		name string
		in   []attribute.KeyValue
		want []attribute.KeyValue
	}{
		{"nothing to cut",
			[]attribute.KeyValue{attribute.String("url.path", "/v2/risks"), attribute.Int("http.response.status_code", 201)},
			[]attribute.KeyValue{attribute.String("url.path", "/v2/risks"), attribute.Int("http.response.status_code", 201)}},
		{"url.full",
			[]attribute.KeyValue{attribute.String("http.request.method", "POST"),
				attribute.String("url.full", "https://u:p@hooks.example.com:8443/services/T0/B0/XYZ?token=abc&sig=def#frag"),
				attribute.String("server.address", "hooks.example.com")},
			[]attribute.KeyValue{attribute.String("http.request.method", "POST"),
				attribute.String("url.full", "https://hooks.example.com:8443"),
				attribute.String("server.address", "hooks.example.com")}},
		{"legacy http.url",
			[]attribute.KeyValue{attribute.String("http.url", "http://127.0.0.1:9/x?k=v")},
			[]attribute.KeyValue{attribute.String("http.url", "http://127.0.0.1:9")}},
		{"url.query",
			[]attribute.KeyValue{attribute.String("url.query", "token=abc"), attribute.String("url.path", "/p")},
			[]attribute.KeyValue{attribute.String("url.path", "/p")}},
		{"unparsable",
			[]attribute.KeyValue{attribute.String("url.full", "://nope?token=abc"), attribute.String("url.full", "/relative?token=abc")},
			[]attribute.KeyValue{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := redactAttributes(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("redactAttributes(%v)\n = %v\nwant %v", tt.in, got, tt.want)
			}
		})
	}
}
