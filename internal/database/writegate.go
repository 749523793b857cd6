package database

import (
	"context"
	"errors"
	"sync"
	"time"

	"gorm.io/gorm"
)

// writeGate queues SQLite's writers in arrival order. SQLite has one write lock, and
// a writer that finds it taken waits in the busy handler, which polls with growing
// sleeps: a newcomer often wins over a writer that has waited long, so under load
// some writes wait seconds (docs/performance.md, "SQLite is one writer"). Taking this
// gate before BEGIN IMMEDIATE or an autocommit write hands the lock over first come,
// first served, without polling: a buffered channel's blocked senders are served in
// order. PostgreSQL has row locks and needs none.
//
// It is a GORM plugin so that every session of the handle finds it (gateOf), and it
// gates autocommit create, update, delete and Exec through callbacks; transactions
// take it in RunInTx and through EnterWrite, and so must any write that skips those
// callbacks: a write read back as rows (UPDATE … RETURNING through Raw().Scan, which
// GORM runs as a query), or one sent on the handle's *sql.DB. A writer that skips the
// gate is not queued: it polls the busy handler against the gate's holder and jumps
// the queue when it wins (docs/performance.md, "SQLite is one writer").
type writeGate struct {
	slot  chan struct{}
	since time.Time // when its holder took it; set only in a writegatestats build
}

const gateName = "riskapi:sqlite-write-gate"

// gateHeld marks a statement whose callbacks took the gate.
const gateHeld = "riskapi:sqlite-write-gate-held"

func newWriteGate() *writeGate { return &writeGate{slot: make(chan struct{}, 1)} }

// Name implements gorm.Plugin.
func (*writeGate) Name() string { return gateName }

// Initialize implements gorm.Plugin: autocommit writes (create, update, delete,
// Exec) take the gate around their statement.
func (g *writeGate) Initialize(db *gorm.DB) error {
	cb := db.Callback()
	enter, leave := gateName+":enter", gateName+":leave"
	return errors.Join(
		cb.Create().Before("gorm:create").Register(enter, g.enterStatement),
		cb.Create().After("gorm:create").Register(leave, g.leaveStatement),
		cb.Update().Before("gorm:update").Register(enter, g.enterStatement),
		cb.Update().After("gorm:update").Register(leave, g.leaveStatement),
		cb.Delete().Before("gorm:delete").Register(enter, g.enterStatement),
		cb.Delete().After("gorm:delete").Register(leave, g.leaveStatement),
		cb.Raw().Before("gorm:raw").Register(enter, g.enterStatement),
		cb.Raw().After("gorm:raw").Register(leave, g.leaveStatement),
	)
}

// enterStatement takes the gate for a statement outside a transaction (a
// transaction took it at its beginning).
func (g *writeGate) enterStatement(db *gorm.DB) {
	if db.Error != nil {
		return
	}
	if _, inTx := db.Statement.ConnPool.(gorm.TxCommitter); inTx {
		return
	}
	ctx := db.Statement.Context
	if ctx == nil {
		ctx = context.Background()
	}
	if err := g.enter(ctx); err != nil {
		db.AddError(err)
		return
	}
	db.InstanceSet(gateHeld, true)
}

// leaveStatement frees the gate if enterStatement took it, whatever the outcome.
func (g *writeGate) leaveStatement(db *gorm.DB) {
	if held, _ := db.InstanceGet(gateHeld); held == true {
		db.InstanceSet(gateHeld, false)
		g.leave()
	}
}

func (g *writeGate) enter(ctx context.Context) error {
	select {
	case g.slot <- struct{}{}:
		g.since = holdClock()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *writeGate) leave() {
	recordHold(g.since)
	<-g.slot
}

// EnterWrite takes db's write gate before a write transaction begins, or before a
// write statement the gate's callbacks do not see, and returns the function that
// frees it, to call once the transaction (committed or rolled back) or the statement
// has ended. On PostgreSQL, which has no gate, and when ctx carries a transaction,
// which took the gate when it began, it does nothing. Errors: ctx ended while waiting.
func EnterWrite(ctx context.Context, db *gorm.DB) (leave func(), err error) {
	g, ok := db.Config.Plugins[gateName].(*writeGate)
	if !ok || InTx(ctx) {
		return func() {}, nil
	}
	if err := g.enter(ctx); err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(g.leave) }, nil
}
