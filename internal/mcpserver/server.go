// Package mcpserver serves the Model Context Protocol on POST /mcp (contract section
// 22, docs/mcp.md) with the official Go SDK's streamable HTTP transport. Each tool is
// a /v2 route in another envelope: a call is turned into the /v2 request an HTTP
// client would send — same method, path, query, body, Authorization and
// Idempotency-Key — and run in-process through the server's own router, so it passes
// the same authentication, rate limits, scopes, tenant caps, idempotency engine,
// request log and audit log, and shares their records: a key replays across MCP and
// HTTP both ways. The schemas come from docs/openapi.yaml (schema.go).
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	riskauth "github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/via"
)

// Version is the server's version in its initialize answer.
const Version = "1.0.0"

// Config wires the MCP server.
type Config struct {
	// Routes is the server's router: each tool call runs through it as a /v2
	// request. Required.
	Routes http.Handler
	// Keys reads idempotency records for get_write_outcome (gormstore.Store).
	// Required.
	Keys KeyPeeker
	// Scope is the idempotency scope of a request whose context carries its
	// principal: the one the engines are built with (auth.TenantID in
	// internal/server), so get_write_outcome reads the records the engine wrote for
	// this credential and no other. Required.
	Scope func(ctx context.Context) (string, error)
	// Now is the clock that decides whether a record is still live. Optional.
	Now func() time.Time
	// SessionTimeout closes a session idle this long. Optional. Default 30 minutes.
	SessionTimeout time.Duration
	// Logger receives the transport's errors. Optional.
	Logger *slog.Logger
}

// Keys of auth.TokenInfo.Extra: what a tool call learns of the /mcp request that
// carried it.
const (
	extraPrincipal  = "principal"
	extraRemoteAddr = "remoteAddr"
)

// New returns the handler of /mcp. It expects the request already authenticated by
// an API key (auth.APIKeys puts the principal in its context): a session is bound to
// the key that opened it (the SDK refuses its id with another credential), and every
// tool call authenticates again as its /v2 request.
func New(cfg Config) (http.Handler, error) {
	if cfg.Routes == nil || cfg.Keys == nil || cfg.Scope == nil {
		return nil, errors.New("mcpserver: Routes, Keys and Scope are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = 30 * time.Minute
	}
	s, err := loadSpec()
	if err != nil {
		return nil, err
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "riskapi", Title: "riskapi risk register", Version: Version},
		&mcp.ServerOptions{Instructions: instructions, Logger: cfg.Logger})
	for _, t := range routes {
		tool, err := s.tool(t)
		if err != nil {
			return nil, err
		}
		bt, err := s.bind(t)
		if err != nil {
			return nil, err
		}
		srv.AddTool(tool, run(cfg.Routes, bt))
	}
	outcomes, err := s.outcomeTool()
	if err != nil {
		return nil, err
	}
	srv.AddTool(outcomes, writeOutcome(cfg.Keys, cfg.Scope, cfg.Now))
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{JSONResponse: true, SessionTimeout: cfg.SessionTimeout, Logger: cfg.Logger,
			// The API key authenticates every request; a browser cannot send it
			// without the agent's code, and a proxy in front may rewrite Host.
			DisableLocalhostProtection: true})
	return auth.RequireBearerToken(verified, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h), nil
}

// instructions is the initialize answer's advice to the agent.
const instructions = `riskapi's risk register. Every write tool requires idempotencyKey: make a fresh UUID for each write you intend, and send the same key with the same arguments to retry it after a timeout, a lost connection or a tool error with retryAfter. A retry never writes twice; it answers the first result with replayed: true. To learn what became of a write without repeating it, call get_write_outcome with its key.`

// verified hands the SDK the principal auth.APIKeys found: the session's user is the
// key, so a session id is useless with another credential.
func verified(ctx context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
	p := riskauth.FromContext(ctx)
	if p == nil {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: p.CredentialID, Extra: map[string]any{extraPrincipal: p, extraRemoteAddr: r.RemoteAddr}}, nil
}

// bind reads the parameter names of t's operation.
func (s *spec) bind(t toolRoute) (boundTool, error) {
	params, err := s.parameters(t.method, t.path)
	if err != nil {
		return boundTool{}, err
	}
	bt := boundTool{toolRoute: t, query: map[string]bool{}, known: map[string]bool{}}
	in, err := s.inputSchema(t)
	if err != nil {
		return boundTool{}, err
	}
	for name := range in["properties"].(map[string]any) {
		bt.known[name] = true
	}
	for _, p := range params {
		name, _ := p["name"].(string)
		switch p["in"] {
		case "path":
			bt.pathParams = append(bt.pathParams, name)
		case "query":
			bt.query[name] = true
		}
	}
	return bt, nil
}

// run is the handler of a tool that is a route.
func run(routes http.Handler, t boundTool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, cerr := arguments(req.Params.Arguments)
		if cerr != nil {
			return refused(cerr), nil
		}
		inner, err := t.request(ctx, args, req.Extra, callOf(req.Session))
		var ce *callError
		if errors.As(err, &ce) {
			return refused(ce), nil
		}
		if err != nil {
			return nil, err
		}
		rec := httptest.NewRecorder()
		routes.ServeHTTP(rec, inner)
		return t.result(rec), nil
	}
}

// arguments reads a call's arguments object.
func arguments(raw json.RawMessage) (map[string]json.RawMessage, *callError) {
	args := map[string]json.RawMessage{}
	if len(raw) == 0 || string(raw) == "null" {
		return args, nil
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, &callError{"VALIDATION_FAILED", "arguments must be a JSON object"}
	}
	return args, nil
}

// callOf names the session's client as its initialize did, for the audit and
// request logs.
func callOf(ss *mcp.ServerSession) via.Call {
	c := via.Call{Via: via.MCP}
	if ss == nil {
		return c
	}
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
		c.Client = p.ClientInfo.Name
		if p.ClientInfo.Version != "" {
			c.Client += "/" + p.ClientInfo.Version
		}
	}
	return c
}
