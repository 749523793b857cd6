package tracing

import (
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// redactURLs hands each ended span on to the exporting processor with the URLs it
// names cut to their origin (docs/tracing.md, "What a span never carries"). A webhook
// endpoint's URL is a credential: a signed URL or a chat tool's carries its secret in
// the query (Google Chat, Teams) or in the path (Slack, Discord), and a trace
// backend has a wider audience than the database. otelhttp's client span sets
// url.full to the whole URL after the span started, with no hook to change it, so
// the rule is kept here, where every span passes whatever made it.
type redactURLs struct{ sdktrace.SpanProcessor }

func (p redactURLs) OnEnd(s sdktrace.ReadOnlySpan) { p.SpanProcessor.OnEnd(redactedSpan{s}) }

// redactedSpan is a span whose attributes are read through redactAttributes.
type redactedSpan struct{ sdktrace.ReadOnlySpan }

func (s redactedSpan) Attributes() []attribute.KeyValue {
	return redactAttributes(s.ReadOnlySpan.Attributes())
}

// urlKeys are the attributes that hold a whole URL: url.full, and http.url of the
// semantic conventions before 1.21.
var urlKeys = map[attribute.Key]bool{semconv.URLFullKey: true, "http.url": true}

// redactAttributes returns attrs with each whole URL cut to scheme://host[:port] and
// url.query left out; an unparsable URL is left out too. attrs itself, when nothing
// needs cutting.
func redactAttributes(attrs []attribute.KeyValue) []attribute.KeyValue {
	var out []attribute.KeyValue
	for i, kv := range attrs {
		redacts := urlKeys[kv.Key] || kv.Key == semconv.URLQueryKey
		if redacts && out == nil {
			out = append(make([]attribute.KeyValue, 0, len(attrs)), attrs[:i]...)
		}
		switch {
		case !redacts:
			if out != nil {
				out = append(out, kv)
			}
		case urlKeys[kv.Key]:
			if origin, ok := originOf(kv.Value.AsString()); ok {
				out = append(out, kv.Key.String(origin))
			}
		}
	}
	if out == nil {
		return attrs
	}
	return out
}

// originOf is raw's scheme and host (with its port), without user info, path, query
// or fragment; false when raw is no absolute URL.
func originOf(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", false
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String(), true
}
