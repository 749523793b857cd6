package server

import (
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ConnLimit wraps ln so that one client has at most max connections open at once:
// a connection beyond that is closed as soon as it is accepted, before anything is
// read from it, so one client cannot use up the process's file descriptors and
// leave the others waiting at accept (README.md, MAX_CONNS_PER_CLIENT). A client is
// the connection's remote address, an IPv4 address or an IPv6 /64 (as the sign-in
// limits count, clientNetwork): TRUSTED_PROXIES do not apply at this level, no
// header having been read, so behind a proxy every connection is the proxy's.
// Each refusal is counted in refused (riskapi_connections_refused_total), and
// logged at most every refusedLogEvery. max ≤ 0 returns ln unchanged.
func ConnLimit(ln net.Listener, max int, refused prometheus.Counter, log *slog.Logger) net.Listener {
	if max <= 0 {
		return ln
	}
	return &connLimit{Listener: ln, max: max, open: map[string]int{}, refused: refused, log: log}
}

// refusedLogEvery spaces the warnings of refused connections: a client hammering
// the cap must not flood the log.
const refusedLogEvery = 10 * time.Second

type connLimit struct {
	net.Listener
	max     int
	refused prometheus.Counter
	log     *slog.Logger
	logged  atomic.Int64 // unix nanoseconds of the last warning

	mu   sync.Mutex
	open map[string]int // client → connections open
}

// Accept returns the next connection of a client under its cap, closing at once
// those over it.
func (l *connLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client := connClient(c.RemoteAddr())
		l.mu.Lock()
		n := l.open[client]
		if n < l.max {
			l.open[client] = n + 1
		}
		l.mu.Unlock()
		if n < l.max {
			return &limitedConn{Conn: c, release: func() { l.release(client) }}, nil
		}
		c.Close()
		l.refuse(client)
	}
}

func (l *connLimit) release(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[client]--; l.open[client] <= 0 {
		delete(l.open, client)
	}
}

func (l *connLimit) refuse(client string) {
	if l.refused != nil {
		l.refused.Inc()
	}
	now, last := time.Now().UnixNano(), l.logged.Load()
	if now-last >= int64(refusedLogEvery) && l.logged.CompareAndSwap(last, now) {
		l.log.Warn("connection refused: client over MAX_CONNS_PER_CLIENT", slog.String("client", client), slog.Int("max", l.max))
	}
}

// connClient is the client a remote address counts for: an IPv4 address, or the
// /64 of an IPv6 one.
func connClient(a net.Addr) string {
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return a.String()
	}
	ip := ap.Addr().Unmap()
	if ip.Is4() {
		return ip.String()
	}
	return netip.PrefixFrom(ip.WithZone(""), 64).Masked().String()
}

// limitedConn gives its client's place back when closed, once however often it is
// closed. It keeps the half-close and the copy fast path net/http looks for on the
// connection.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite half-closes the connection (net/http, after a 431 and similar).
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ReadFrom keeps sendfile for downloads.
func (c *limitedConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(c.Conn, r)
}
