// Package requestid gives every request one id and puts it in the request's context
// once: the X-Request-Id response header, the problem body's "requestId" and every log
// line logged with the request's context carry it, without anyone reading it back from
// the response.
package requestid

import (
	"context"
	"log/slog"
	"regexp"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"go.opentelemetry.io/otel/trace"

	"github.com/riskapi/riskapi/internal/ids"
)

type key struct{}

// With returns ctx carrying the request id id.
func With(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, key{}, id)
}

// From returns the request id ctx carries, or "" outside a request.
func From(ctx context.Context) string {
	id, _ := ctx.Value(key{}).(string)
	return id
}

// shape is what a client-sent X-Request-Id must look like to be kept.
var shape = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// Middleware keeps a client-sent X-Request-Id that is a short token (anything else
// could inject into logs), mints one otherwise (Echo's RequestID with
// ids.New(ids.Request): "req_" and 32 hex digits of a UUIDv7), echoes it in the
// response header and puts it in the request's context. Minted ids are ordered by
// time, so the request log's index on them takes each new one at its end, as its
// index on the entry's id does; Echo's random ones landed anywhere in it, a page
// written per entry (docs/performance.md, "The peer (gopotency)").
func Middleware() echo.MiddlewareFunc {
	mint := middleware.RequestIDWithConfig(middleware.RequestIDConfig{
		Generator: func() string { return ids.New(ids.Request) },
		RequestIDHandler: func(c echo.Context, id string) {
			c.SetRequest(c.Request().WithContext(With(c.Request().Context(), id)))
		},
	})
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		minted := mint(next)
		return func(c echo.Context) error {
			if id := c.Request().Header.Get(echo.HeaderXRequestID); id != "" && !shape.MatchString(id) {
				c.Request().Header.Del(echo.HeaderXRequestID)
			}
			return minted(c)
		}
	}
}

// LogHandler wraps h so that every record logged with a request's context (the
// slog ...Context and LogAttrs methods) carries "requestId", and "traceId" (32 hex
// digits) when the context is in a trace (docs/tracing.md): a log line leads to
// its trace. Wrap the server's logger once; packages below it then only pass the
// context.
func LogHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(logHandler); ok {
		return h
	}
	return logHandler{h}
}

type logHandler struct{ slog.Handler }

// Handle adds the request id of ctx, if any, to r.
func (h logHandler) Handle(ctx context.Context, r slog.Record) error {
	id, sc := From(ctx), trace.SpanContextFromContext(ctx)
	if id != "" || sc.HasTraceID() {
		r = r.Clone()
	}
	if id != "" {
		r.AddAttrs(slog.String("requestId", id))
	}
	if sc.HasTraceID() {
		r.AddAttrs(slog.String("traceId", sc.TraceID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs keeps the wrapper on derived loggers.
func (h logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return logHandler{h.Handler.WithAttrs(as)}
}

// WithGroup keeps the wrapper on derived loggers.
func (h logHandler) WithGroup(name string) slog.Handler {
	return logHandler{h.Handler.WithGroup(name)}
}
