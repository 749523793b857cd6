package server

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/mcpserver"
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
		e.Add(method, "/mcp", echo.WrapHandler(h), chain...)
	}
	return nil
}
