package main

import (
	"context"
	"database/sql"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/labstack/echo/v4"
)

// requestLog is what -request-log adds: riskapi's request log (docs/requests.md),
// kept the way riskapi keeps it, so that the peer pays what that log costs and
// nothing else of riskapi's — one entry per authenticated request into riskapi's
// request_log_entries table (its indexes included), queued without blocking the
// request and written by one goroutine in COPY batches of up to 500 entries or
// every 500 ms, whichever comes first; a full buffer (10,000) drops the entry.
// riskapi's own writer is internal/requestlog; this is the same policy, not its
// code (the peer is a module of its own).
type requestLog struct {
	db      *sql.DB
	entries chan []any
}

// logColumns are request_log_entries' columns the peer fills, in values' order.
var logColumns = []string{"tenant_id", "id", "request_id", "method", "path", "route", "status", "duration_us",
	"credential_type", "credential_id", "idempotency_key", "idempotency_outcome", "created_at", "api_version"}

func newRequestLog(db *sql.DB) *requestLog {
	l := &requestLog{db: db, entries: make(chan []any, 10000)}
	go l.run()
	return l
}

// middleware queues one entry per request that authenticated (it runs inside auth).
func (l *requestLog) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err) // the status the client gets
		}
		req, res := c.Request(), c.Response()
		var key, outcome any
		if k := req.Header.Get("Idempotency-Key"); k != "" {
			key, outcome = k, "executed"
			if res.Header().Get("Idempotent-Replayed") == "true" {
				outcome = "replayed"
			}
		}
		e := []any{c.Get("tenant"), "log_" + newID(), "req_" + newID(), req.Method,
			req.URL.Path, c.Path(), res.Status, time.Since(start).Microseconds(), "api_key", "key_peer",
			key, outcome, start.UTC(), "2026-12-01"}
		select {
		case l.entries <- e:
		default: // full: dropped, as riskapi's writer drops rather than slow a request
		}
		return nil
	}
}

func (l *requestLog) run() {
	batch := make([][]any, 0, 500)
	tick := time.NewTicker(500 * time.Millisecond)
	for {
		select {
		case e := <-l.entries:
			if batch = append(batch, e); len(batch) == 500 {
				batch = l.copy(batch)
			}
		case <-tick.C:
			batch = l.copy(batch)
		}
	}
}

// copy writes batch in one COPY and returns it emptied; a failed batch is dropped.
func (l *requestLog) copy(batch [][]any) [][]any {
	if len(batch) == 0 {
		return batch
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := l.db.Conn(ctx)
	if err == nil {
		err = conn.Raw(func(dc any) error {
			_, err := dc.(*stdlib.Conn).Conn().CopyFrom(ctx, pgx.Identifier{"public", "request_log_entries"},
				logColumns, pgx.CopyFromRows(batch))
			return err
		})
		conn.Close()
	}
	if err != nil {
		slog.Warn("peer: request log batch dropped", "entries", len(batch), "err", err)
	}
	return batch[:0]
}
