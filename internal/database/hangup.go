package database

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/stdlib"
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
//
// A read that reaches its query timeout (WithQueryTimeout) is cancelled in the store
// as well: a cancel request stops the statement on the server (through a PgBouncer
// too, which passes cancel requests on), and the connection, which then answers
// the statement with an error, is kept; it is broken only if no answer comes within
// queryCancelGrace. Ending the connection alone would leave the statement running
// on the server until it next wrote to the closed socket.
type hangUpWatcher struct {
	conn net.Conn
	pg   *pgconn.PgConn
	// cancelled is closed once the cancel request of the statement being cancelled
	// is done; nil when none was sent.
	cancelled chan struct{}
}

func newHangUpWatcher(pc *pgconn.PgConn) ctxwatch.Handler {
	return &hangUpWatcher{conn: pc.Conn(), pg: pc}
}

// queryCancelGrace is how long a statement cancelled at its query timeout has to
// answer before its connection is broken.
const queryCancelGrace = 2 * time.Second

// HandleCancel is called once ctx, the running statement's, is done.
func (h *hangUpWatcher) HandleCancel(ctx context.Context) {
	now := time.Now()
	if context.Cause(ctx) == ErrQueryTimeout {
		_ = h.conn.SetDeadline(now.Add(queryCancelGrace))
		done := make(chan struct{})
		h.cancelled = done
		go func() {
			defer close(done)
			cctx, cancel := context.WithTimeout(context.Background(), queryCancelGrace)
			defer cancel()
			_ = h.pg.CancelRequest(cctx)
		}()
		return
	}
	_ = h.conn.SetDeadline(cancelDeadline(ctx, now))
}

// HandleUnwatchAfterCancel is called when the statement has ended after
// HandleCancel. A cancel request still on its way could stop the connection's next
// statement: it is waited for first, as pgx's own cancelling watcher does.
func (h *hangUpWatcher) HandleUnwatchAfterCancel() {
	if h.cancelled != nil {
		<-h.cancelled
		h.cancelled = nil
	}
	_ = h.conn.SetDeadline(time.Time{})
}

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

// hangUpConnector opens riskapi's PostgreSQL connections: pgx's database/sql
// connections (hangUpConn), whose PgConn uses hangUpWatcher, and whose
// transactions begin with bounds (txBounds).
type hangUpConnector struct {
	driver.Connector
	bounds string
	pooler *poolerWarning // warns of a pooler met without DATABASE_POOLER
}

// Connect opens a connection. Errors: pgx's.
func (h hangUpConnector) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := h.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &hangUpConn{stdConn: c.(*stdlib.Conn), bounds: h.bounds, pooler: h.pooler}, nil
}

// hangUpConn is pgx's database/sql connection, except that a statement pgx did not
// send because its context had ended fails with that context's error. pgx's
// adapter reports it as driver.ErrBadConn ("safe to retry"), and database/sql
// closes a connection that answers ErrBadConn: a client hanging up just as its
// statement was handed over would still cost the pool a healthy connection. The
// pgx.Conn stays reachable (Conn) for the stores that pipeline on it.
type hangUpConn struct {
	*stdConn
	bounds string         // txBounds: sent with each BEGIN
	pooler *poolerWarning // warns of a pooler met without DATABASE_POOLER
}

// stdConn names pgx's connection so that embedding it does not hide its Conn method
// behind a field called Conn.
type stdConn = stdlib.Conn

// ExecContext is stdlib.Conn's, with a statement not sent reported as such.
func (c *hangUpConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	res, err := c.stdConn.ExecContext(ctx, query, args)
	return res, c.notSent(ctx, err)
}

// QueryContext is stdlib.Conn's, with a statement not sent reported as such.
func (c *hangUpConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	rows, err := c.stdConn.QueryContext(ctx, query, args)
	return rows, c.notSent(ctx, err)
}

// ResetSession is stdlib.Conn's, except that a connection idle in no transaction
// whose check (a ping, after a second idle) was not sent because ctx had ended is
// kept: database/sql closes one that answers ErrBadConn.
func (c *hangUpConn) ResetSession(ctx context.Context) error {
	err := c.stdConn.ResetSession(ctx)
	if c.Conn().PgConn().TxStatus() != 'I' {
		return err
	}
	return c.notSent(ctx, err)
}

// notSent returns ctx's error in place of the ErrBadConn of a statement not sent on
// a connection that is still open; any other error unchanged. It also warns of a
// pooler met without DATABASE_POOLER (preparedStatementLost).
func (c *hangUpConn) notSent(ctx context.Context, err error) error {
	if err != nil && preparedStatementLost(err) {
		c.pooler.warn(err)
	}
	if err == nil || !errors.Is(err, driver.ErrBadConn) || ctx.Err() == nil || c.Conn().IsClosed() {
		return err
	}
	return fmt.Errorf("statement not sent: %w", ctx.Err())
}

// PgxConn returns the pgx connection under dc, a PostgreSQL store's database/sql
// driver connection (the argument of sql.Conn.Raw), for the stores that pipeline or
// COPY on it. dc must come from a PostgreSQL store: any other panics.
func PgxConn(dc any) *pgx.Conn { return dc.(interface{ Conn() *pgx.Conn }).Conn() }
