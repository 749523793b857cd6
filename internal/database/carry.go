package database

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"gorm.io/gorm"
)

// A unit of work on PostgreSQL pays a round trip — and the server a statement's
// startup — per statement. A store whose INSERT nobody reads back before the commit
// (the audit log's entry) can hand it to Defer instead: the unit of work's next
// carrying statement (ExecCarrying: the event's INSERT) sends it along as a
// data-modifying CTE, in the same statement, or else RunInTx sends it on its own
// before the unit of work ends. Either way it runs in the unit of work's transaction,
// before its commit, exactly once (docs/performance.md, issue 24).

type carryKey struct{}

// carried is one unit of work's deferred INSERTs.
type carried struct {
	mu    sync.Mutex
	db    *gorm.DB
	stmts []string
	args  []any
}

// withCarrier returns ctx with a fresh slot for deferred statements on db.
func withCarrier(ctx context.Context, db *gorm.DB) (context.Context, *carried) {
	c := &carried{db: db}
	return context.WithValue(ctx, carryKey{}, c), c
}

// take returns and clears the deferred statements.
func (c *carried) take() ([]string, []any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, a := c.stmts, c.args
	c.stmts, c.args = nil, nil
	return s, a
}

// runCarrying runs fn with a slot for deferred statements on PostgreSQL and sends
// what is left in it once fn has succeeded.
func runCarrying(ctx context.Context, db *gorm.DB, fn func(ctx context.Context) error) error {
	if db.Dialector.Name() != string(Postgres) {
		return fn(ctx)
	}
	ctx, c := withCarrier(ctx, db)
	if err := fn(ctx); err != nil {
		return err
	}
	return c.flush(ctx)
}

// flush sends what no statement carried, one statement each, in ctx's transaction.
func (c *carried) flush(ctx context.Context) error {
	stmts, args := c.take()
	for _, s := range stmts {
		n := strings.Count(s, "?")
		if err := Conn(ctx, c.db).Exec(s, args[:n]...).Error; err != nil {
			return err
		}
		args = args[n:]
	}
	return nil
}

// Defer runs stmt — one INSERT without RETURNING, its arguments as `?` — in the unit
// of work ctx carries: on PostgreSQL, inside a RunInTx, it is sent with the next
// ExecCarrying statement or when the unit of work's function returns; elsewhere at
// once. Its errors surface there, and roll the unit of work back. stmt must not
// contain a literal `?`.
func Defer(ctx context.Context, db *gorm.DB, stmt string, args ...any) error {
	c, ok := ctx.Value(carryKey{}).(*carried)
	if !ok || db.Dialector.Name() != string(Postgres) {
		return Conn(ctx, db).Exec(stmt, args...).Error
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stmts = append(c.stmts, stmt)
	c.args = append(c.args, args...)
	return nil
}

// ExecCarrying runs stmt (its arguments as `?`) through Conn, with the statements
// Defer holds for ctx's unit of work as data-modifying CTEs in front of it, so that
// they take no round trip of their own. stmt may begin with its own WITH (not
// RECURSIVE). The result's RowsAffected is stmt's own.
func ExecCarrying(ctx context.Context, db *gorm.DB, stmt string, args ...any) *gorm.DB {
	c, ok := ctx.Value(carryKey{}).(*carried)
	if !ok {
		return Conn(ctx, db).Exec(stmt, args...)
	}
	pending, pargs := c.take()
	if len(pending) == 0 {
		return Conn(ctx, db).Exec(stmt, args...)
	}
	var b strings.Builder
	b.WriteString("WITH ")
	for i, s := range pending {
		fmt.Fprintf(&b, "carried%d AS (%s), ", i, s)
	}
	if rest, ok := strings.CutPrefix(strings.TrimLeft(stmt, " \t\n"), "WITH "); ok {
		b.WriteString(rest)
	} else {
		s := b.String()
		b.Reset()
		b.WriteString(strings.TrimSuffix(s, ", "))
		b.WriteString(" ")
		b.WriteString(stmt)
	}
	return Conn(ctx, db).Exec(b.String(), append(pargs, args...)...)
}
