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
//
// A unit of work RunInTx opens on PostgreSQL goes further: it begins no transaction
// until a statement needs one (lazy). Until then the statements it holds — Defer's
// (the risk's INSERT, the audit entry's) and the last carrying statement, ExecLast's
// (the event's) — wait, and when the unit of work ends without anything else having
// been sent they go out as one autocommit statement: a data-modifying CTE per held
// INSERT, the last one carrying them. One statement is atomic
// on its own, so an unkeyed create is one round trip instead of BEGIN, INSERT,
// INSERT, COMMIT (docs/performance.md, issue 26). The first statement that needs the
// transaction (a read, a lock, a second ExecLast) begins it, and what was held is sent
// in it first, so every statement sees the writes held before it.

type carryKey struct{}

// carried is one unit of work's deferred INSERTs.
type carried struct {
	mu    sync.Mutex
	db    *gorm.DB
	stmts []string
	args  []any
	// lazy is set for the carrier of a unit of work RunInTx opened without a
	// transaction yet (runLazy); open once its transaction has begun.
	lazy, open bool
	// last is the statement ExecLast left to the end of a lazy unit of work, which
	// carries the held ones; lastDone is called with its RowsAffected once sent.
	last     string
	lastArgs []any
	lastDone func(rows int64)
}

// holding reports whether statements are still held back from a lazy unit of work
// that has sent nothing yet (c.mu held).
func (c *carried) holding() bool { return c.lazy && !c.open }

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

// takeLast returns and clears the statement ExecLast left, if any.
func (c *carried) takeLast() (stmt string, args []any, done func(int64)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	stmt, args, done = c.last, c.lastArgs, c.lastDone
	c.last, c.lastArgs, c.lastDone = "", nil, nil
	return stmt, args, done
}

// sendHeld sends everything held — the deferred statements, carried by the last one
// when there is one, else by the last of them — as one statement on h (the
// transaction, or the pool for an autocommit statement), and reports the last
// statement's RowsAffected to its caller.
func (c *carried) sendHeld(h *gorm.DB) error {
	stmts, args := c.take()
	last, lastArgs, done := c.takeLast()
	if last == "" {
		if len(stmts) == 0 {
			return nil
		}
		n := strings.Count(stmts[len(stmts)-1], "?")
		last, lastArgs = stmts[len(stmts)-1], args[len(args)-n:]
		stmts, args = stmts[:len(stmts)-1], args[:len(args)-n]
	}
	res := h.Exec(carry(stmts, last), append(args, lastArgs...)...)
	if res.Error != nil {
		return res.Error
	}
	if done != nil {
		done(res.RowsAffected)
	}
	return nil
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
// ExecCarrying statement or when the unit of work's function returns (a lazy unit of
// work that has not begun its transaction also sends it first when it does, before
// the statement that begins it); elsewhere at once. Its errors surface there, and
// roll the unit of work back. stmt must not contain a literal `?`.
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
	// Conn first: in a lazy unit of work it begins the transaction, which sends
	// what was held before this statement.
	conn := Conn(ctx, db)
	pending, pargs := c.take()
	return conn.Exec(carry(pending, stmt), append(pargs, args...)...)
}

// carry is stmt with pending as data-modifying CTEs in front of it (stmt itself
// when there are none); stmt may begin with its own WITH (not RECURSIVE).
func carry(pending []string, stmt string) string {
	if len(pending) == 0 {
		return stmt
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
	return b.String()
}

// ExecLast runs stmt (its arguments as `?`) as ExecCarrying does and calls done with
// its RowsAffected — unless ctx's unit of work is lazy and has sent nothing yet:
// then stmt is left to the unit of work's end, which sends it, carrying what is
// held, as the unit's one statement (or in its transaction, first of all, if a later
// statement begins one), and calls done then. Errors: the statement's, at once or
// from the unit of work's end. stmt must not contain a literal `?`.
func ExecLast(ctx context.Context, db *gorm.DB, done func(rows int64), stmt string, args ...any) error {
	if c, ok := ctx.Value(carryKey{}).(*carried); ok {
		c.mu.Lock()
		if c.holding() && c.last == "" {
			c.last, c.lastArgs, c.lastDone = stmt, args, done
			c.mu.Unlock()
			return nil
		}
		c.mu.Unlock()
	}
	res := ExecCarrying(ctx, db, stmt, args...)
	if res.Error != nil {
		return res.Error
	}
	done(res.RowsAffected)
	return nil
}
