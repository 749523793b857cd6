package server

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/requestid"
)

// useChain installs the middleware every request passes, matched route or not, in
// order: HEAD served as GET; the request id; logs and metrics (which also render
// errors, so the final status is known); the store's call timeout (storeCall) and
// a read's (query); recovery from panics. Each route's own middleware (routes.go)
// runs inside it.
func useChain(e *echo.Echo, log *slog.Logger, m *httpMetrics, storeCall, query time.Duration) {
	e.Pre(headAsGet)
	e.Use(requestid.Middleware(), observe(log, m), callTimeout(storeCall, query))
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisablePrintStack: true,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			log.LogAttrs(c.Request().Context(), slog.LevelError, "panic",
				slog.String("error", err.Error()), slog.String("stack", string(stack)))
			return problem.New(problem.Internal, "an internal error occurred; the request id identifies it in our logs")
		},
	}))
}

// callTimeout bounds every store call the request makes — authentication, reads,
// unkeyed writes, the handler's statements — by d (config.Leases.Store): a store that
// stops answering gets the request a 503 STORE_UNAVAILABLE after d instead of a hang.
// It bounds the calls, not the request: an upload may stream for longer. A read's
// (GET's) calls are bounded by query (QUERY_TIMEOUT) when that is sooner, and
// cancelled in the store when they reach it (503 QUERY_TIMEOUT).
func callTimeout(d, query time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			ctx := database.WithCallTimeout(req.Context(), d)
			if req.Method != http.MethodGet && req.Method != http.MethodHead {
				// A request that writes reads what it wrote: never the replica.
				ctx = database.WritesPrimary(ctx)
			} else {
				ctx = database.WithQueryTimeout(ctx, query)
			}
			c.SetRequest(req.WithContext(ctx))
			return next(c)
		}
	}
}

// routeCallTimeout replaces the call timeout callTimeout set, for a route whose
// store calls may take longer by design (route.Route.StoreTimeout).
func routeCallTimeout(d time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			c.SetRequest(req.WithContext(database.WithCallTimeout(req.Context(), d)))
			return next(c)
		}
	}
}

// headAsGet serves HEAD as the GET of the same route with the body discarded (RFC
// 9110 section 9.3.2): same status and headers, no body, no route of its own. Being
// a GET it needs the read scope and never touches idempotency records. OPTIONS's
// Allow lists HEAD wherever it lists GET, as a 405's does (allowHead), and like
// every answer of the API it is Cache-Control: no-store (README.md, Connections).
func headAsGet(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		switch c.Request().Method {
		case http.MethodHead:
			c.Request().Method = http.MethodGet
			c.Response().Writer = bodiless{c.Response().Writer}
		case http.MethodOptions: // Echo's answer lists the routes' methods only
			c.Response().Before(func() {
				allowHead(c.Response().Header())
				c.Response().Header().Set("Cache-Control", "no-store")
			})
		}
		return next(c)
	}
}

// bodiless drops a response's body and keeps everything else.
type bodiless struct{ http.ResponseWriter }

func (b bodiless) Write(p []byte) (int, error) { return len(p), nil }

// Unwrap lets http.ResponseController reach the connection's writer.
func (b bodiless) Unwrap() http.ResponseWriter { return b.ResponseWriter }
