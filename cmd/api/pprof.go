//go:build pprof

package main

import (
	"net"
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof/ on http.DefaultServeMux
	"os"
)

// A local profiling build only (go build -tags pprof ./cmd/api): the shipped binary
// has no pprof endpoint at all. It listens on loopback, at RISKAPI_PPROF_ADDR or
// 127.0.0.1:6060, apart from the API's own listener (docs/performance.md).
func init() {
	addr := os.Getenv("RISKAPI_PPROF_ADDR")
	if addr == "" {
		addr = "127.0.0.1:6060"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return // profiling is best effort: a busy port must not stop the server
	}
	go func() { _ = http.Serve(ln, nil) }()
}
