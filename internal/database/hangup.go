package database

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
)

// hangUpWatcher is the pgx context watcher of riskapi's PostgreSQL connections. pgx's
// default ends a statement whose context is cancelled by setting its connection's
// deadline to now, which breaks the connection: the pool must open another. A
// request's context is cancelled whenever its client hangs up, so a flood of
// hang-ups — which needs no valid credential — became a flood of reconnects that
// starved the pool. For a store call of a request (a context marked by
// WithCallTimeout) cancelled by its client, the statement already sent is instead
// let finish within its call timeout and the connection is kept; pgx sends no later
// statement on a context already done, so a request whose client has gone starts no
// new store work. A deadline that expires, or the cancellation of unmarked
// (background) work, still ends the statement at once.
type hangUpWatcher struct{ conn net.Conn }

func newHangUpWatcher(pc *pgconn.PgConn) ctxwatch.Handler { return &hangUpWatcher{conn: pc.Conn()} }

// HandleCancel is called once ctx, the running statement's, is done.
func (h *hangUpWatcher) HandleCancel(ctx context.Context) {
	_ = h.conn.SetDeadline(cancelDeadline(ctx, time.Now()))
}

// HandleUnwatchAfterCancel is called when the statement has ended after HandleCancel.
func (h *hangUpWatcher) HandleUnwatchAfterCancel() { _ = h.conn.SetDeadline(time.Time{}) }

// cancelDeadline is when a statement whose context ended at now must stop reading
// and writing: now, unless the context is a request's store call cancelled by its
// client hanging up, which gets the rest of its call timeout.
func cancelDeadline(ctx context.Context, now time.Time) time.Time {
	d, marked := ctx.Value(callTimeoutKey{}).(time.Duration)
	if !marked || !errors.Is(ctx.Err(), context.Canceled) {
		return now
	}
	limit := now.Add(d)
	if dl, ok := ctx.Deadline(); ok && dl.Before(limit) {
		return dl
	}
	return limit
}

// txContext is the context RunInTx begins a request's transaction with: ctx's
// deadline without its cancellation. database/sql rolls back a transaction whose
// context is cancelled with that same context, which pgx refuses and answers by
// breaking the connection; so a client hanging up would still cost the pool a
// connection. The transaction's statements keep ctx: once the client has gone none
// is sent, fn fails, and RunInTx rolls back on a live connection. Unmarked
// (background) contexts are returned as they are.
func txContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, marked := ctx.Value(callTimeoutKey{}).(time.Duration); !marked {
		return ctx, func() {}
	}
	detached := context.WithoutCancel(ctx)
	if dl, ok := ctx.Deadline(); ok {
		return context.WithDeadline(detached, dl)
	}
	return detached, func() {}
}
