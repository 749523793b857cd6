package delivery

import (
	"context"
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/riskapi/riskapi/internal/tracing"
)

// Trace makes s trace each attempt (docs/tracing.md): a "webhook delivery" span, a
// child of the trace of the request that emitted the event when parents remembers
// it, around an HTTP client span whose context goes to the endpoint as traceparent
// (W3C trace context); that span's url.full is cut to the endpoint's origin before
// it is exported (internal/tracing, redact.go): the URL is a credential. Call it
// before the first Send; tp nil leaves s untraced.
func (s *Sender) Trace(tp trace.TracerProvider, parents *tracing.Parents) *Sender {
	if tp == nil {
		return s
	}
	s.tracer, s.parents = tp.Tracer("github.com/riskapi/riskapi/internal/events/delivery"), parents
	s.client.Transport = otelhttp.NewTransport(s.client.Transport,
		otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(tracing.Propagator),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method }))
	return s
}

// startSpan starts j's attempt span when s traces, and returns the function that
// ends it with the attempt's outcome.
func (s *Sender) startSpan(ctx context.Context, j *Job) (context.Context, func(status int, failure string)) {
	if s.tracer == nil {
		return ctx, func(int, string) {}
	}
	ctx, span := s.tracer.Start(s.parents.Context(ctx, j.EventID), "webhook delivery",
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
			attribute.String("riskapi.event.id", j.EventID),
			attribute.String("riskapi.webhook_endpoint.id", j.EndpointID),
			attribute.Int("riskapi.delivery.attempt", j.Attempt)))
	return ctx, func(status int, failure string) {
		if status != 0 {
			span.SetAttributes(attribute.Int("http.response.status_code", status))
		}
		if failure != "" {
			span.SetStatus(codes.Error, failure)
		}
		span.End()
	}
}
