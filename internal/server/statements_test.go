package server_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/dbtest"
)

// TestStatementsPerWrite counts, on the wire to PostgreSQL, what a write sends once
// its connections have their statements prepared: the statements PostgreSQL runs
// (one CommandComplete or ErrorResponse each) and the round trips (each time the
// server answers and riskapi sends again). The counts are docs/idempotency.md's
// "Statements per keyed write" and docs/performance.md's floor table: an unkeyed
// create 2 (2), a keyed first execution 8 (5), a replay 2 (2), the same for a
// scored risk (its appetite read with the API key) and for a dashboard session's
// write on /v1 (its appetite read with the session), and a test key's scored risk
// one more each for its sandbox's appetite (3 (3), 9 (6)). Background work
// (the request log's batches, the schedules) shares the wire, so each request is
// counted a few times and the fewest kept: background traffic only ever adds.
func TestStatementsPerWrite(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("statements on PostgreSQL's wire")
	}
	t.Parallel()
	u, err := url.Parse(dbtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	wire := startWireCounter(t, u.Host)
	u.Host = wire.addr()
	env := apitest.New(t, func(c *config.Config) {
		// Two connections, so that a few warm-up requests prepare every statement on
		// both; REQUEST_LOG=off keeps the log's batches off the wire.
		c.Database.URL, c.Database.MaxConns, c.HTTP.RequestLog = u.String(), 2, false
	})
	a := env.Tenant("Acme")
	n := 0
	// writeAs creates a risk with bearer, scored (likelihood and impact: its
	// appetite is read) or not, sent with key unless key is ""; write with the
	// live key.
	var writeAs func(bearer, key string, scored bool)
	testKey := env.TestKey(a)
	session := apitest.Login(t, env, a).Token
	write := func(key string, scored bool) { writeAs(a.Key, key, scored) }
	writeAs = func(bearer, key string, scored bool) {
		n++
		body := map[string]any{"title": fmt.Sprintf("risk %d", n)}
		path := "/v2/risks"
		if bearer == session {
			path = "/v1/risks"
		}
		r := apitest.Request{Method: http.MethodPost, Path: path, Bearer: bearer, JSON: body}
		if key != "" {
			r.Header = http.Header{"Idempotency-Key": {key}}
			body["title"] = key
		}
		if scored {
			body["likelihood"], body["impact"] = 2, 3
		}
		apitest.Do(t, env, r).Expect(http.StatusCreated)
	}
	for i := range 6 {
		for _, scored := range []bool{false, true} {
			write("", scored)
			write(fmt.Sprintf("warm-key-%d-%t", i, scored), scored)
			write(fmt.Sprintf("warm-key-%d-%t", i, scored), scored)
			writeAs(testKey, "", scored)
			writeAs(testKey, fmt.Sprintf("warm-test-key-%d-%t", i, scored), scored)
			writeAs(session, "", scored)
			writeAs(session, fmt.Sprintf("warm-session-key-%d-%t", i, scored), scored)
		}
	}
	for _, tc := range []struct {
		name                   string
		send                   func(try int)
		statements, roundTrips int64
	}{
		{"unkeyed create", func(int) { write("", false) }, 2, 2},
		{"unkeyed create, scored", func(int) { write("", true) }, 2, 2},
		{"unkeyed create, scored, test key", func(int) { writeAs(testKey, "", true) }, 3, 3},
		{"keyed first execution", func(try int) { write(fmt.Sprintf("count-key-%d", try), false) }, 8, 5},
		{"keyed first execution, scored", func(try int) { write(fmt.Sprintf("scored-key-%d", try), true) }, 8, 5},
		{"keyed first execution, scored, test key", func(try int) { writeAs(testKey, fmt.Sprintf("scored-test-key-%d", try), true) }, 9, 6},
		{"replay", func(int) { write("count-key-0", false) }, 2, 2},
		{"unkeyed create, session", func(int) { writeAs(session, "", false) }, 2, 2},
		{"unkeyed create, scored, session", func(int) { writeAs(session, "", true) }, 2, 2},
		{"keyed first execution, scored, session", func(try int) { writeAs(session, fmt.Sprintf("session-key-%d", try), true) }, 8, 5},
	} {
		statements, roundTrips := int64(1<<62), int64(1<<62)
		for try := range 5 {
			s0, r0 := wire.counts()
			tc.send(try)
			s1, r1 := wire.counts()
			statements, roundTrips = min(statements, s1-s0), min(roundTrips, r1-r0)
		}
		if statements != tc.statements || roundTrips != tc.roundTrips {
			t.Errorf("%s: %d statements in %d round trips, want %d in %d (docs/idempotency.md)",
				tc.name, statements, roundTrips, tc.statements, tc.roundTrips)
		}
	}
}

// wireCounter is a TCP proxy to PostgreSQL that counts, over every connection, the
// statements the server completed and the round trips.
type wireCounter struct {
	ln                     net.Listener
	target                 string
	statements, roundTrips atomic.Int64
	wg                     sync.WaitGroup
}

func startWireCounter(t *testing.T, target string) *wireCounter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := &wireCounter{ln: ln, target: target}
	w.wg.Add(1)
	go w.accept()
	t.Cleanup(func() { ln.Close(); w.wg.Wait() })
	return w
}

func (w *wireCounter) addr() string { return w.ln.Addr().String() }

func (w *wireCounter) counts() (statements, roundTrips int64) {
	return w.statements.Load(), w.roundTrips.Load()
}

func (w *wireCounter) accept() {
	defer w.wg.Done()
	for {
		c, err := w.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", w.target)
		if err != nil {
			c.Close()
			continue
		}
		// answered: the server has sent something since the client last did, so the
		// client's next bytes start a round trip.
		var answered atomic.Bool
		answered.Store(true)
		w.wg.Add(2)
		go func() { // client to server
			defer w.wg.Done()
			defer s.Close()
			buf := make([]byte, 64<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					if answered.Swap(false) {
						w.roundTrips.Add(1)
					}
					if _, werr := s.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
		go func() { // server to client: typed messages from the first byte (sslmode=disable)
			defer w.wg.Done()
			defer c.Close()
			head := make([]byte, 5)
			for {
				if _, err := io.ReadFull(s, head); err != nil {
					return
				}
				body := make([]byte, int(binary.BigEndian.Uint32(head[1:]))-4)
				if _, err := io.ReadFull(s, body); err != nil {
					return
				}
				switch head[0] {
				case 'C', 'E', 'I': // CommandComplete, ErrorResponse, EmptyQueryResponse
					w.statements.Add(1)
				}
				answered.Store(true)
				if _, err := c.Write(append(head, body...)); err != nil {
					return
				}
			}
		}()
	}
}
