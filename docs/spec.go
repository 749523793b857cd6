// Package docs carries the contract's machine-readable part, docs/openapi.yaml, into
// the binary: the MCP server (internal/mcpserver) derives its tools' schemas from it,
// so the tools and the HTTP routes are described by one source.
package docs

import _ "embed"

// OpenAPI is docs/openapi.yaml as committed.
//
//go:embed openapi.yaml
var OpenAPI []byte
