package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/riskapi/riskapi/internal/tracing"
)

// useTracing, when tp is set (OTEL_EXPORTER_OTLP_ENDPOINT, docs/tracing.md), gives
// every request a server span, outermost of all, so it measures the whole chain
// and its final status: otelhttp reads a client's traceparent (W3C trace context)
// and starts the span as its child; the span is named after the matched route
// ("PATCH /v2/risks/:id") once routing is done, never after the raw path, whose
// ids would make every name unique. Without tp nothing is installed.
func useTracing(e *echo.Echo, tp trace.TracerProvider) {
	if tp == nil {
		return
	}
	e.Pre(echo.WrapMiddleware(otelhttp.NewMiddleware("request",
		otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(tracing.Propagator),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method }))))
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if route := c.Path(); route != "" {
				span := trace.SpanFromContext(c.Request().Context())
				span.SetName(c.Request().Method + " " + route)
				span.SetAttributes(attribute.String("http.route", route))
			}
			return next(c)
		}
	})
}
