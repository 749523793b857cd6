package server

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"

	"github.com/riskapi/riskapi/internal/problem"
)

// netHTTP431 is the whole answer net/http writes, in one write straight to the
// connection and before any handler runs, to a request whose header section is over
// http.Server.MaxHeaderBytes (1 MB by default; net/http's server.go, errTooLarge).
const netHTTP431 = "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n" +
	"Connection: close\r\n\r\n431 Request Header Fields Too Large"

// HeaderLimit wraps ln so that a request with more than 1 MB of headers is answered
// like every other refusal, with a problem+json 431 HEADERS_TOO_LARGE carrying a
// request id (docs/errors.md), instead of net/http's plain text: net/http offers no
// hook there, so each connection replaces exactly that write. log records the
// refusal with its request id.
func HeaderLimit(ln net.Listener, log *slog.Logger) net.Listener {
	return headerLimit{Listener: ln, log: log}
}

type headerLimit struct {
	net.Listener
	log *slog.Logger
}

func (l headerLimit) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return headerLimitConn{Conn: c, log: l.log}, nil
}

// headerLimitConn is a connection whose net/http 431 is rewritten; it keeps the
// half-close and the copy fast path net/http looks for on the connection.
type headerLimitConn struct {
	net.Conn
	log *slog.Logger
}

func (c headerLimitConn) Write(p []byte) (int, error) {
	if string(p) != netHTTP431 {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(headersTooLarge(c.log, c.RemoteAddr())); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CloseWrite half-closes the connection, as net/http does after its 431 so that
// the client reads the answer before the connection closes.
func (c headerLimitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ReadFrom keeps sendfile for downloads.
func (c headerLimitConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(c.Conn, r)
}

// headersTooLarge is the whole HTTP/1.1 431 answer, with a fresh request id, which
// it logs.
func headersTooLarge(log *slog.Logger, from net.Addr) []byte {
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	rid := hex.EncodeToString(raw[:])
	code := problem.HeadersTooLarge
	body, _ := json.Marshal(problemBody{Type: code.TypeURI(), Title: code.Title(), Status: code.Status(),
		Detail: "the request's header fields are over 1 MB", Code: code, RequestID: rid})
	log.Warn("request refused: header fields over 1 MB", slog.String("requestId", rid),
		slog.Int("status", code.Status()), slog.String("remote", from.String()))
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/problem+json\r\n"+
		"Cache-Control: no-store\r\nX-Request-Id: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", rid, len(body)+1)
	b.Write(body)
	b.WriteByte('\n')
	return b.Bytes()
}
