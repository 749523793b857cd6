package database

import (
	"context"

	"gorm.io/gorm"
)

type txKey struct{}

// WithTx returns ctx carrying tx: every store that reads its handle through Conn on
// that context writes inside tx. The caller owns tx's commit or rollback.
func WithTx(ctx context.Context, tx *gorm.DB) context.Context {
	return context.WithValue(ctx, txKey{}, tx)
}

// Conn returns the transaction carried by ctx, or db itself, bound to ctx. Domain
// stores call it for every statement so a request's unit of work covers them.
func Conn(ctx context.Context, db *gorm.DB) *gorm.DB {
	if tx, ok := ctx.Value(txKey{}).(*gorm.DB); ok {
		return tx.WithContext(ctx)
	}
	return db.WithContext(ctx)
}

// InTx reports whether ctx carries a transaction.
func InTx(ctx context.Context) bool {
	_, ok := ctx.Value(txKey{}).(*gorm.DB)
	return ok
}

// RunInTx runs fn in the transaction ctx carries, or else in a new transaction on db
// that commits when fn returns nil. fn must make its writes through Conn on the
// context it is given. Errors: fn's, or the store's (classified).
func RunInTx(ctx context.Context, db *gorm.DB, fn func(ctx context.Context) error) error {
	if InTx(ctx) {
		return fn(ctx)
	}
	leave, err := EnterWrite(ctx, db)
	if err != nil {
		return Classify(err)
	}
	defer leave()
	err = db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return fn(WithTx(ctx, tx))
	})
	return Classify(err)
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

// InTx runs fn as one unit of work (RunInTx): in the transaction ctx carries, or in
// a new one committed when fn returns nil and rolled back otherwise.
func (r Runner) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	return RunInTx(ctx, r.db, fn)
}
