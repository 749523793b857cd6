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
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return fn(WithTx(ctx, tx))
	})
	return Classify(err)
}
