package database

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"gorm.io/gorm"
)

type txKey struct{}

// WithTx returns ctx carrying tx: every store that reads its handle through Conn on
// that context writes inside tx. The caller owns tx's commit or rollback.
func WithTx(ctx context.Context, tx *gorm.DB) context.Context {
	return context.WithValue(ctx, txKey{}, tx)
}

// PendingTx is a transaction begun by the first store call that asks for it (Conn),
// not before. A keyed write on SQLite carries one from its reservation into its
// handler, so it queues at the write gate only once the handler has decoded and
// checked the request and sends its first statement; it holds the single write lock
// for its statements and the commit, not for the handler's preparation.
type PendingTx struct {
	begin func() (*gorm.DB, error)
	once  sync.Once
	tx    *gorm.DB
	err   error
	begun atomic.Bool // set once begin has succeeded (ReadConn's question)
}

// NewPendingTx returns a transaction that begin opens on first use; begin runs at
// most once, and its error is every later use's.
func NewPendingTx(begin func() (*gorm.DB, error)) *PendingTx { return &PendingTx{begin: begin} }

// Tx begins the transaction if it has not begun, and returns it. Errors: begin's.
func (p *PendingTx) Tx() (*gorm.DB, error) {
	p.once.Do(func() {
		p.tx, p.err = p.begin()
		p.begun.Store(p.err == nil)
	})
	return p.tx, p.err
}

// Begun returns the transaction if it has begun (successfully), else nil. It never
// begins it, and once it has answered nil no later Tx will: the owner calls it to end
// the unit of work (roll back or just let go), and a straggling statement then fails
// rather than open a transaction nobody will end.
func (p *PendingTx) Begun() *gorm.DB {
	began := true
	p.once.Do(func() { began = false; p.err = errNotBegun })
	if !began || p.err != nil {
		return nil
	}
	return p.tx
}

var errNotBegun = errors.New("transaction ended before it began")

// WithPendingTx returns ctx carrying p: stores that call Conn on it write inside p's
// transaction, begun by the first of them. The caller owns the commit or rollback.
func WithPendingTx(ctx context.Context, p *PendingTx) context.Context {
	return context.WithValue(ctx, txKey{}, p)
}

// Conn returns the transaction carried by ctx, or db itself, bound to ctx. Domain
// stores call it for every statement so a request's unit of work covers them. A
// pending transaction (WithPendingTx) begins here; if it cannot, the handle returned
// carries the error, and every statement on it fails with it.
func Conn(ctx context.Context, db *gorm.DB) *gorm.DB {
	switch tx := ctx.Value(txKey{}).(type) {
	case *gorm.DB:
		return tx.WithContext(ctx)
	case *PendingTx:
		t, err := tx.Tx()
		if err != nil {
			failed := db.WithContext(ctx)
			failed.AddError(err)
			return failed
		}
		return t.WithContext(ctx)
	}
	return db.WithContext(ctx)
}

// ReadConn is Conn for a read that needs neither the unit of work's writes nor a
// snapshot shared with them (under READ COMMITTED each statement reads its own
// anyway): while ctx's pending transaction has not begun, the read goes to the
// pool as an autocommit statement instead of beginning it, so that a lazy unit of
// work (RunInTx on PostgreSQL) can still end as one statement. A unit that has not
// begun holds no connection, so the read needs no second one at once.
func ReadConn(ctx context.Context, db *gorm.DB) *gorm.DB {
	if p, ok := ctx.Value(txKey{}).(*PendingTx); ok && !p.begun.Load() {
		return db.WithContext(ctx)
	}
	return Conn(ctx, db)
}

// InTx reports whether ctx carries a transaction, begun or pending.
func InTx(ctx context.Context) bool {
	switch ctx.Value(txKey{}).(type) {
	case *gorm.DB, *PendingTx:
		return true
	}
	return false
}

// RunInTx runs fn in the transaction ctx carries, or else in a new transaction on db
// that commits when fn returns nil; a context marked by WithCallTimeout bounds the
// new transaction as a whole. fn must make its writes through Conn on the context it
// is given; statements it deferred (Defer) are sent before it ends. On PostgreSQL the
// new transaction is lazy (carry.go): if fn sent nothing but statements it held
// (Defer, ExecLast), they go out as one autocommit statement and no transaction
// is begun. Errors: fn's, or the store's (classified; a COMMIT, or the one autocommit
// statement, whose outcome is unknown is marked ErrOutcomeUnknown, see CommitFailed).
func RunInTx(ctx context.Context, db *gorm.DB, fn func(ctx context.Context) error) (err error) {
	if InTx(ctx) {
		return runCarrying(ctx, db, fn)
	}
	defer func() { noteServerTimeout(ctx, err) }()
	ctx, cancel := bounded(ctx)
	defer cancel()
	if db.Dialector.Name() == string(Postgres) {
		return runLazy(ctx, db, fn)
	}
	// On SQLite, writers queue at the write gate before BEGIN (writeGate); the wait
	// is bounded like the transaction.
	leave, err := EnterWrite(ctx, db)
	if err != nil {
		return Classify(err)
	}
	defer leave()
	txCtx, endTx := txContext(ctx)
	defer endTx()
	tx := db.WithContext(txCtx).Begin()
	if tx.Error != nil {
		return Classify(tx.Error)
	}
	committed := false
	defer func() {
		if !committed {
			tx.Rollback()
		}
	}()
	if err := runCarrying(WithTx(ctx, tx), db, fn); err != nil {
		return Classify(err)
	}
	committed = true
	if err := tx.Commit().Error; err != nil {
		return CommitFailed(err)
	}
	return nil
}

// runLazy is RunInTx's new unit of work on PostgreSQL: its transaction begins with
// the first statement that needs it (a PendingTx), which first sends what fn held
// until then; if none does, what fn held is sent as one autocommit statement.
func runLazy(ctx context.Context, db *gorm.DB, fn func(ctx context.Context) error) error {
	txCtx, endTx := txContext(ctx)
	defer endTx()
	c := &carried{db: db, lazy: true}
	var tx *gorm.DB // the transaction, once begun
	pending := NewPendingTx(func() (*gorm.DB, error) {
		t := db.WithContext(txCtx).Begin()
		if t.Error != nil {
			return nil, Classify(t.Error)
		}
		tx = t
		c.mu.Lock()
		c.open = true
		c.mu.Unlock()
		if err := c.sendHeld(t.WithContext(ctx)); err != nil {
			return nil, err
		}
		return t, nil
	})
	committed := false
	defer func() {
		if !committed && tx != nil {
			tx.Rollback()
		}
	}()
	uctx := context.WithValue(WithPendingTx(ctx, pending), carryKey{}, c)
	if err := fn(uctx); err != nil {
		pending.Begun() // no straggler begins it now
		return Classify(err)
	}
	if pending.Begun() == nil {
		if tx != nil { // begun, but sending what was held failed
			return Classify(errNotBegun)
		}
		// Nothing needed the transaction: what was held is the unit's one
		// statement, committed on its own (an error's outcome: markAutocommit).
		return c.sendHeld(db.WithContext(ctx))
	}
	if err := c.sendHeld(tx.WithContext(ctx)); err != nil {
		return Classify(err)
	}
	committed = true
	if err := tx.Commit().Error; err != nil {
		return CommitFailed(err)
	}
	return nil
}

// Runner is riskapi's one transaction runner: every write of more than one statement
// runs as one unit of work through it, whether or not the request carries an
// Idempotency-Key. A keyed request's reservation has begun the transaction already,
// and the runner joins it; otherwise it opens one. A single statement needs no
// runner: it is atomic on its own, and Conn puts it in the reservation's
// transaction when there is one.
type Runner struct{ db *gorm.DB }

// NewRunner returns the runner over db.
func NewRunner(db *gorm.DB) Runner { return Runner{db: db} }

// Outside returns ctx without the transaction it carries, if any: statements made
// with it run on their own, outside the unit of work (risks.Outside: an import's
// reads that check a file before any of it is written).
func (r Runner) Outside(ctx context.Context) context.Context {
	return context.WithValue(ctx, txKey{}, nil)
}

// Carries reports whether ctx carries a unit of work (InTx), which then commits
// after its holder's call returns (a keyed request's, with its record).
func (r Runner) Carries(ctx context.Context) bool { return InTx(ctx) }

// InTx runs fn as one unit of work (RunInTx): in the transaction ctx carries, or in
// a new one committed when fn returns nil and rolled back otherwise.
func (r Runner) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	return RunInTx(ctx, r.db, fn)
}
