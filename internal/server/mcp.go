package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/mcpserver"
	"github.com/riskapi/riskapi/internal/problem"
)

// mountMCP serves the MCP server at /mcp (contract section 22, docs/mcp.md): POST
// carries the messages, DELETE ends a session; GET, the optional stream of
// server-initiated messages, is 405 (the server sends none). Each request is
// authenticated by its API key (failures throttled as on /v2); the rate limit,
// scopes, tenant caps and idempotency apply to each tool call, which runs as its
// /v2 request through e itself, so a limited call is a tool error with retryAfter
// rather than a failed transport.
func mountMCP(e *echo.Echo, m *mounter, d Deps) error {
	// The engines' own scope function (engines, routes.go), so that the records
	// get_write_outcome reads are those the engine keeps for the caller.
	scope := func(ctx context.Context) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "/mcp", nil)
		if err != nil {
			return "", err
		}
		return auth.TenantID(e.NewContext(req, nil))
	}
	h, err := mcpserver.New(mcpserver.Config{Routes: e, Keys: d.IdempotencyKeys, Scope: scope, Now: d.Now, Logger: d.Logger})
	if err != nil {
		return err
	}
	chain := []echo.MiddlewareFunc{noStore, authThrottle(m.apiKey, m.failures, m.failed)}
	for _, method := range []string{http.MethodPost, http.MethodDelete} {
		e.Add(method, "/mcp", sessionRefusal(h), chain...)
	}
	return nil
}

// sessionRefusal serves h, the MCP SDK's handler, turning its plain-text 403 (a
// session id sent with another key than the one that opened it) into the problem
// JSON every refusal is, 403 FORBIDDEN (docs/mcp.md).
func sessionRefusal(h http.Handler) echo.HandlerFunc {
	return func(c echo.Context) error {
		w := &refusalCatcher{ResponseWriter: c.Response()}
		h.ServeHTTP(w, c.Request())
		if w.refused {
			return problem.New(problem.Forbidden, "this MCP session was opened with another API key: initialize a session with this one")
		}
		return nil
	}
}

// refusalCatcher holds back a 403 written as plain text; everything else passes.
type refusalCatcher struct {
	http.ResponseWriter
	refused bool
}

func (w *refusalCatcher) WriteHeader(status int) {
	if status == http.StatusForbidden && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.refused = true
		w.Header().Del("Content-Type")
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *refusalCatcher) Write(b []byte) (int, error) {
	if w.refused {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Flush keeps the SDK's event streams streaming.
func (w *refusalCatcher) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *refusalCatcher) Unwrap() http.ResponseWriter { return w.ResponseWriter }
