package database

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
)

// poolerSafeConfig parses a postgres:// URL into the configuration of a connection
// that works through PgBouncer in transaction pooling mode as well as directly
// (docs/deploying.md): the URL's own startup parameters only (riskapi adds none:
// its bounds are per transaction, txBounds), and statements sent as unnamed
// ones, parsed and executed in one round trip with the parameter and result types
// pgx cached for their SQL (QueryExecModeCacheDescribe), so that no named prepared
// statement has to outlive the transaction it was made in. It encodes values as
// pgx's default statement cache did (binary, of the server's types), where pgx's
// exec mode would send text; both cost alike (docs/deploying.md, Query mode). A URL that names default_query_exec_mode itself keeps it:
// an operator talking to PostgreSQL directly may choose the statement cache.
func poolerSafeConfig(raw string) (*pgx.ConnConfig, error) {
	pcfg, err := pgx.ParseConfig(raw)
	if err != nil {
		return nil, errors.New("DATABASE_URL is not a valid postgres URL")
	}
	if !namesQueryMode(raw) {
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

// BeginTx begins a transaction with riskapi's bounds (txBounds). With the default
// options, BEGIN and the bounds go in one round trip (one simple-protocol query);
// others take a second.
func (c *hangUpConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if c.bounds == "" {
		return c.stdConn.BeginTx(ctx, opts)
	}
	if opts != (driver.TxOptions{}) {
		tx, err := c.stdConn.BeginTx(ctx, opts)
		if err != nil {
			return nil, err
		}
		if _, err := c.Conn().Exec(ctx, c.bounds); err != nil {
			_ = tx.Rollback()
			return nil, err
		}
		return tx, nil
	}
	if c.Conn().IsClosed() {
		return nil, driver.ErrBadConn
	}
	tx, err := c.Conn().BeginTx(ctx, pgx.TxOptions{BeginQuery: "BEGIN; " + c.bounds})
	if err != nil {
		return nil, err
	}
	return boundedTx{ctx: ctx, tx: tx}, nil
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
