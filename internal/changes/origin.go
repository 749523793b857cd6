package changes

import "context"

// Origin is where a change was asked from: the request's id, client address (as
// TRUSTED_PROXIES defines it) and User-Agent. Put in the context once per request by
// the server's chain (internal/server); absent for CLI commands and jobs.
type Origin struct {
	RequestID string
	IP        string
	UserAgent string
	// Via is "mcp" for a tool call of the MCP server, "" for plain HTTP; Client the
	// MCP client's name/version from its initialize (internal/via).
	Via, Client string
}

type originKey struct{}

// WithOrigin returns ctx carrying o.
func WithOrigin(ctx context.Context, o Origin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

// OriginFrom returns the origin ctx carries, or the zero Origin (a CLI command, a
// job).
func OriginFrom(ctx context.Context) Origin {
	o, _ := ctx.Value(originKey{}).(Origin)
	return o
}
