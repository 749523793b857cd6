package server_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
)

// dialerFrom dials from loopback address ip (127.0.0.2, 127.0.0.3, …): to the
// server, each is another client.
func dialerFrom(ip string) *net.Dialer {
	return &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
}

// openFDs is how many file descriptors this process has open (Linux).
func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(fds)
}

// TestConnectionsPerClientCapped: 300 idle connections from one client address
// (issue 36: 24,000 used up the server's file descriptors and another client's
// request took 5.8 s). The server keeps MAX_CONNS_PER_CLIENT (256) of them and
// closes the other 44 at once; its file descriptors grow by about those 256, not
// by whatever one client opens; another address's requests meanwhile are all
// answered, none held up at accept. Once the first client hangs up, it connects
// again. Not parallel: it counts the process's file descriptors, which the other
// tests open too.
func TestConnectionsPerClientCapped(t *testing.T) {
	env := apitest.New(t)
	if max := env.App.Config.HTTP.MaxConnsPerClient; max != 256 {
		t.Fatalf("MAX_CONNS_PER_CLIENT %d, want the default 256", max)
	}
	addr := serveReal(t, env)
	other := &http.Client{Transport: &http.Transport{DialContext: dialerFrom("127.0.0.3").DialContext, DisableKeepAlives: true}}
	get := func() (time.Duration, error) {
		began := time.Now()
		res, err := other.Get("http://" + addr + "/healthz")
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return 0, errors.New(res.Status)
		}
		return time.Since(began), nil
	}
	if _, err := get(); err != nil { // the server is warm
		t.Fatal(err)
	}

	before := openFDs(t)
	flood := dialerFrom("127.0.0.2")
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for i := range 300 {
		c, err := flood.DialContext(context.Background(), "tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i+1, err)
		}
		conns = append(conns, c)
	}
	var slowest time.Duration
	for range 20 {
		took, err := get()
		if err != nil {
			t.Fatalf("another client's request during the flood: %v", err)
		}
		slowest = max(slowest, took)
	}
	if slowest > 2*time.Second {
		t.Errorf("another client's slowest request during the flood took %s: held up at accept", slowest)
	}

	// The server has accepted every connection by now: count those it closed.
	var mu sync.Mutex
	closed := 0
	var wg sync.WaitGroup
	deadline := time.Now().Add(2 * time.Second) // well within the 10 s for headers
	for _, c := range conns {
		wg.Go(func() {
			c.SetReadDeadline(deadline)
			if _, err := c.Read(make([]byte, 1)); errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err) {
				mu.Lock()
				closed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if closed != 300-256 {
		t.Errorf("the server closed %d of 300 idle connections from one client, want the 44 over 256", closed)
	}
	// This process holds both ends: the test's 300, and the server's.
	if server := openFDs(t) - before - len(conns); server > 256+40 {
		t.Errorf("the server holds %d more file descriptors for one client's 300 connections, want about 256", server)
	}
	t.Logf("one client's 300 connections: %d closed at once, server fds +%d; another client's slowest of 20 requests %s",
		closed, openFDs(t)-before-len(conns), slowest)

	for _, c := range conns {
		c.Close()
	}
	conns = nil
	again := &http.Client{Transport: &http.Transport{DialContext: flood.DialContext, DisableKeepAlives: true}}
	var err error
	for range 50 { // the server notices the hang-ups as its reads end
		var res *http.Response
		if res, err = again.Get("http://" + addr + "/healthz"); err == nil {
			res.Body.Close()
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Errorf("the first client after closing its connections: %v", err)
	}
}

// isReset reports whether err is the peer resetting the connection.
func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}
