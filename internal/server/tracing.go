package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/route"
	"github.com/riskapi/riskapi/internal/tracing"
)

// useTracing, when tp is set (OTEL_EXPORTER_OTLP_ENDPOINT, docs/tracing.md), gives
// every request a server span, outermost of all, so it measures the whole chain
// and its final status: otelhttp reads a client's traceparent (W3C trace context)
// and starts the span as its child; the span is named after the matched route
// ("PATCH /v2/risks/:id") once routing is done, never after the raw path, whose
// ids would make every name unique. A request for one of the skip paths (the
// routes declared Untraced) gets no span. Without tp nothing is installed.
func useTracing(e *echo.Echo, tp trace.TracerProvider, skip map[string]bool) {
	if tp == nil {
		return
	}
	e.Pre(inPlace(otelhttp.NewMiddleware("request",
		otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(tracing.Propagator),
		otelhttp.WithFilter(func(r *http.Request) bool { return !skip[r.URL.Path] }),
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

// inPlace is echo.WrapMiddleware, except that the request m hands on (the same one
// with the span in its context) is copied into the request Echo was given rather
// than replacing it: Echo routes the request it was given, so a later Pre
// middleware's change to the request (headAsGet's HEAD → GET) must be made to that
// one, or every HEAD would be a 405 with tracing on.
func inPlace(m func(http.Handler) http.Handler) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) (err error) {
			given := c.Request()
			m(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r != given {
					*given = *r
				}
				c.SetResponse(echo.NewResponse(w, c.Echo()))
				err = next(c)
			})).ServeHTTP(c.Response(), given)
			return err
		}
	}
}

// untraced is the set of paths of the routes declared Untraced.
func untraced(routes []route.Route) map[string]bool {
	out := map[string]bool{}
	for _, r := range routes {
		if r.Untraced {
			out[r.Path] = true
		}
	}
	return out
}

// Attributes of a keyed request's span: what the idempotency engine did with it
// (an idempotency.Outcome), and whether the response was a replay of a stored one,
// the handler not run — what an operator looks for in a trace (docs/tracing.md).
const (
	idempotencyOutcomeKey  = attribute.Key("riskapi.idempotency.outcome")
	idempotencyReplayedKey = attribute.Key("riskapi.idempotency.replayed")
)

// traceIdempotency notes, on c's request span, what the idempotency engine did with
// the request (part of its OnOutcome, routes.go); without a recording span it does
// nothing.
func traceIdempotency(c echo.Context, o idempotency.Outcome) {
	span := trace.SpanFromContext(c.Request().Context())
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(idempotencyOutcomeKey.String(string(o)),
		idempotencyReplayedKey.Bool(o == idempotency.OutcomeReplayed))
}
