// Package via says which envelope a request came in: plain HTTP, or a tool call of
// the MCP server (internal/mcpserver), which runs each call as an in-process /v2
// request. The audit log and the request log name such calls (contract section 22,
// docs/mcp.md). Only code in this process can mark a request: nothing a client sends
// sets it.
package via

import "context"

// MCP is the Via of a tool call.
const MCP = "mcp"

// Call is how a request came: Via "mcp" and the client's name and version as its
// initialize said ("claude-code/2.1.0"); the zero Call for plain HTTP.
type Call struct {
	Via    string
	Client string
}

type callKey struct{}

// With returns ctx marked as carrying c.
func With(ctx context.Context, c Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// From returns the Call ctx carries, the zero Call for plain HTTP.
func From(ctx context.Context) Call {
	c, _ := ctx.Value(callKey{}).(Call)
	return c
}
