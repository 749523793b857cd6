// Package netfault is a TCP proxy for fault tests: it sits between riskapi and its
// PostgreSQL server (or any TCP service) and, on command, stalls the bytes in
// flight, cuts every connection, refuses new ones, or cuts a connection right after
// forwarding a chosen byte pattern (a COMMIT, say) so that the client never hears the
// server's answer — then restores normal service. It is test support, in a non-test
// file so that several test packages share it; it listens on 127.0.0.1 only.
package netfault

import (
	"bytes"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy forwards connections from its own address to a target. Its methods are safe
// for concurrent use.
type Proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	conns   map[*pair]struct{}
	refuse  bool
	stalled chan struct{} // non-nil while stalled: closed by Restore
	cutOn   []byte        // non-nil: cut a connection after forwarding these bytes upstream
	cuts    int           // connections cut by CutAfter's pattern
	cutSkip int           // chunks carrying cutOn still let through (CutAfterSkipping)
	closed  bool
	wg      sync.WaitGroup
}

// pair is one proxied connection: the client's and the one to the target.
type pair struct {
	client, server net.Conn
	once           sync.Once
	lost           atomic.Bool // CutAfter matched: answers are dropped until the cut
}

// lostAnswerGrace is how long CutAfter lets the server act on what it was sent
// before the connection is cut.
const lostAnswerGrace = 200 * time.Millisecond

// Start listens on a free port of 127.0.0.1 and forwards each connection to target
// (host:port). Errors: the listener could not be opened.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("netfault: listen: %w", err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[*pair]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// StartT is Start for a test; a cleanup closes the proxy.
func StartT(tb testing.TB, target string) *Proxy {
	tb.Helper()
	p, err := Start(target)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(p.Close)
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Stall stops forwarding in both directions: open and new connections stay open, and
// whatever either side sends is held until Restore. To the client the server is
// frozen (as under SIGSTOP or a silent partition).
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stalled == nil {
		p.stalled = make(chan struct{})
	}
}

// Cut closes every open connection at once, as a server process that exits does
// (FIN: the client reads EOF); new connections are forwarded (unless Refuse or
// Stall say otherwise).
func (p *Proxy) Cut() { p.each(func(c *pair) { c.close(false) }) }

// Reset is Cut with an RST to the client: its reads and writes fail with "connection
// reset by peer".
func (p *Proxy) Reset() { p.each(func(c *pair) { c.close(true) }) }

func (p *Proxy) each(f func(*pair)) {
	p.mu.Lock()
	conns := make([]*pair, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		f(c)
	}
}

// Refuse makes new connections fail at once (accepted and reset: the server is
// unreachable) while on is true. Open connections are left alone; Cut them too for
// a full outage.
func (p *Proxy) Refuse(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = on
}

// CutAfter makes the proxy, whenever it forwards a chunk containing pattern from a
// client to the server, drop every answer on that connection from then on and cut
// it (the client's side with an RST) a moment later, after the server has acted on
// what it was sent.
// With a pattern only the last round trip of a write carries (a parameter value),
// the server commits and the client never learns it. A nil pattern turns it off.
func (p *Proxy) CutAfter(pattern []byte) { p.CutAfterSkipping(pattern, 0) }

// CutAfterSkipping is CutAfter that first lets skip chunks carrying pattern through:
// for a value that also travels in earlier round trips of the same write (a risk's
// JSON goes out with its event before it goes out as the stored response).
func (p *Proxy) CutAfterSkipping(pattern []byte, skip int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutOn, p.cutSkip = pattern, skip
}

// PatternCuts is how many connections CutAfter's pattern has cut so far.
func (p *Proxy) PatternCuts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cuts
}

// Restore ends Stall, Refuse and CutAfter: held bytes flow again and new connections
// are forwarded.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stalled != nil {
		close(p.stalled)
		p.stalled = nil
	}
	p.refuse = false
	p.cutOn = nil
}

// Close stops listening, cuts every connection and waits for the proxy's goroutines.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	p.Restore()
	p.ln.Close()
	p.Reset()
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse := p.refuse
		p.mu.Unlock()
		if refuse {
			reset(c)
			continue
		}
		s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			reset(c)
			continue
		}
		pr := &pair{client: c, server: s}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			pr.close(true)
			continue
		}
		p.conns[pr] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(pr, c, s, true)
		go p.pipe(pr, s, c, false)
	}
}

// pipe copies src to dst, waiting while the proxy is stalled, until either side
// ends; then it closes both.
func (p *Proxy) pipe(pr *pair, src, dst net.Conn, upstream bool) {
	defer p.wg.Done()
	defer func() {
		pr.close(false)
		p.mu.Lock()
		delete(p.conns, pr)
		p.mu.Unlock()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.waitWhileStalled()
			if upstream && p.matches(buf[:n]) {
				// Lose the answer: from now on nothing passes back, while the rest of
				// what the client sends still reaches the server, which gets a moment
				// to act on it before both sides close.
				pr.lost.Store(true)
				time.AfterFunc(lostAnswerGrace, func() { pr.close(true) })
			}
			if !upstream && pr.lost.Load() {
				continue
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Proxy) matches(chunk []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cutOn == nil || !bytes.Contains(chunk, p.cutOn) {
		return false
	}
	if p.cutSkip > 0 {
		p.cutSkip--
		return false
	}
	p.cuts++
	return true
}

func (p *Proxy) waitWhileStalled() {
	p.mu.Lock()
	ch := p.stalled
	p.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// close closes both sides, the client's with an RST when rst.
func (pr *pair) close(rst bool) {
	pr.once.Do(func() {
		if rst {
			reset(pr.client)
		} else {
			pr.client.Close()
		}
		pr.server.Close()
	})
}

// reset closes c with an RST rather than a FIN: to the peer the connection breaks,
// as when a server process dies.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// SimpleQuery is the PostgreSQL wire message that sends sql by the simple query
// protocol ('Q', its length, the text, a NUL): how pgx sends a statement without
// arguments, a transaction's COMMIT among them. Give it to CutAfter to lose the
// answer to exactly that statement.
func SimpleQuery(sql string) []byte {
	n := 4 + len(sql) + 1
	msg := []byte{'Q', byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
	return append(append(msg, sql...), 0)
}
