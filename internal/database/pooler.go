package database

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// PoolerTransaction is the value of Options.Pooler (DATABASE_POOLER) for a
// DATABASE_URL that points at a pooler in transaction mode, such as PgBouncer's.
const PoolerTransaction = "transaction"

// connConfig parses a postgres:// URL into the configuration of riskapi's
// connections (docs/deploying.md, PgBouncer): the URL's own startup parameters only
// (riskapi adds none: its bounds are per transaction, txBounds), and the query
// mode that pooler asks for. Direct (pooler ""), pgx's default: each statement is
// prepared once per connection and executed by name, the fastest mode. Behind a
// transaction-mode pooler (PoolerTransaction), where the next transaction may run
// on another server connection, statements are sent as unnamed ones, parsed and
// executed in one round trip with the types pgx cached for their SQL
// (QueryExecModeCacheDescribe), so that no named prepared statement has to outlive
// the transaction it was made in. A URL that names default_query_exec_mode itself
// keeps it either way.
func connConfig(raw, pooler string) (*pgx.ConnConfig, error) {
	pcfg, err := pgx.ParseConfig(raw)
	if err != nil {
		return nil, errors.New("DATABASE_URL is not a valid postgres URL")
	}
	if pooler == PoolerTransaction && !namesQueryMode(raw) {
		pcfg.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	}
	return pcfg, nil
}

// namesQueryMode reports whether the URL's query string sets default_query_exec_mode.
func namesQueryMode(raw string) bool {
	_, query, ok := strings.Cut(raw, "?")
	if !ok {
		return false
	}
	q, err := url.ParseQuery(query)
	return err == nil && q.Has("default_query_exec_mode")
}

// preparedStatementLost reports PostgreSQL's "prepared statement … does not exist"
// (26000) or "… already exists" (42P05). riskapi names no statement itself, so on
// its connections they mean pgx's statement cache met a server connection other
// than the one it prepared on: a transaction-mode pooler without DATABASE_POOLER.
// The statement was refused, not run.
func preparedStatementLost(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "26000" || pgErr.Code == "42P05")
}

// poolerWarning logs, at most once a minute, that a pooler's prepared-statement
// error shows DATABASE_POOLER is missing.
type poolerWarning struct {
	log  *slog.Logger
	last atomic.Int64 // unix nanoseconds of the last warning
}

// warn logs err's warning unless one was logged in the last minute.
func (w *poolerWarning) warn(err error) {
	if w == nil || w.log == nil {
		return
	}
	now := time.Now().UnixNano()
	last := w.last.Load()
	if now-last < int64(time.Minute) || !w.last.CompareAndSwap(last, now) {
		return
	}
	w.log.Warn("a prepared statement went missing between transactions: DATABASE_URL points at a transaction-mode pooler "+
		"(PgBouncer); set DATABASE_POOLER=transaction (docs/deploying.md)", slog.String("error", err.Error()))
}

// txBounds is the statement that gives a transaction riskapi's bounds on the
// server: idle_in_transaction_session_timeout, SET LOCAL so that it lasts exactly
// as long as the transaction and never stays on a pooled server connection; ""
// when opts sets none.
func txBounds(opts Options) string {
	if opts.IdleInTxTimeout <= 0 {
		return ""
	}
	return fmt.Sprintf("SET LOCAL idle_in_transaction_session_timeout = %d", opts.IdleInTxTimeout.Milliseconds())
}

// BeginStatements returns the statements that begin a transaction with riskapi's
// bounds (txBounds) on dc, a PostgreSQL store's driver connection (the argument of
// sql.Conn.Raw), for a store that sends BEGIN itself in a pipeline: send them first,
// in order.
func BeginStatements(dc any) []string {
	if c, ok := dc.(*hangUpConn); ok && c.bounds != "" {
		return []string{"BEGIN", c.bounds}
	}
	return []string{"BEGIN"}
}

// BeginTx begins a transaction with riskapi's bounds (txBounds) and, for a read's
// transaction, its statement deadline (readBound). With the default options, BEGIN
// and the bounds go in one round trip (one simple-protocol query); others take a
// second.
func (c *hangUpConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	bounds := joinBounds(c.bounds, readBound(ctx))
	if bounds == "" {
		return c.stdConn.BeginTx(ctx, opts)
	}
	if opts != (driver.TxOptions{}) {
		tx, err := c.stdConn.BeginTx(ctx, opts)
		if err != nil {
			return nil, err
		}
		if _, err := c.Conn().Exec(ctx, bounds); err != nil {
			_ = tx.Rollback()
			return nil, err
		}
		return tx, nil
	}
	if c.Conn().IsClosed() {
		return nil, driver.ErrBadConn
	}
	tx, err := c.Conn().BeginTx(ctx, pgx.TxOptions{BeginQuery: "BEGIN; " + bounds})
	if err != nil {
		return nil, err
	}
	return boundedTx{ctx: ctx, tx: tx}, nil
}

// readBoundMargin is how much longer than a read's query timeout PostgreSQL's own
// statement_timeout is (readBound): the client's cancel request at the timeout
// normally stops the statement first and is recorded for QueryTimedOut; the
// server's timeout is the backstop for a cancel that cannot arrive (the process
// died, the network to the server dropped).
const readBoundMargin = time.Second

// readBound is the SET LOCAL statement_timeout of a transaction begun for a read
// (a context marked by WithQueryTimeout): its query timeout plus readBoundMargin,
// enforced by the server itself, for exactly that transaction (SET LOCAL: it never
// stays on a pooled connection, nor reaches a write's transaction). "" for any other
// context. docs/register.md, Costly reads.
func readBound(ctx context.Context) string {
	q, ok := ctx.Value(queryTimeoutKey{}).(*queryMark)
	if !ok {
		return ""
	}
	return fmt.Sprintf("SET LOCAL statement_timeout = %d", (q.d + readBoundMargin).Milliseconds())
}

// joinBounds joins the non-empty statements of a, b into one simple-protocol query.
func joinBounds(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// boundedTx is the database/sql face of a pgx transaction, as pgx's stdlib adapter
// makes it: Commit and Rollback on the context it was begun with.
type boundedTx struct {
	ctx context.Context
	tx  pgx.Tx
}

// Commit commits. Errors: pgx's (pgx.ErrTxCommitRollback for a COMMIT answered
// ROLLBACK).
func (t boundedTx) Commit() error { return t.tx.Commit(t.ctx) }

// Rollback rolls back. Errors: pgx's.
func (t boundedTx) Rollback() error { return t.tx.Rollback(t.ctx) }
