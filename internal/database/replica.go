package database

import (
	"context"
	"database/sql"

	"gorm.io/gorm"
)

// Reads from a replica (DATABASE_READ_URL; docs/deploying.md, Replicas). A read
// goes to the replica only when three things hold: its store marked it as one that
// may lag (MayLag: the lists — risks with their search and export, attachments,
// events, the request log, the audit log with its export — and the heat map), its
// request writes nothing (WritesPrimary, set by the HTTP server on every method but
// GET and HEAD), and it is not inside a transaction. Everything else — idempotency
// lookups and replays, the key inspector, credentials, any read of a write — reads
// the primary, as it always did.

type mayLagKey struct{}

type primaryKey struct{}

// MayLag returns ctx marked so that its statements may read from the replica,
// which can be behind the primary. A list store marks its read with it.
func MayLag(ctx context.Context) context.Context { return context.WithValue(ctx, mayLagKey{}, true) }

// WritesPrimary returns ctx marked as a request that writes: none of its reads goes
// to the replica, even one MayLag marks, so it reads what it wrote.
func WritesPrimary(ctx context.Context) context.Context {
	return context.WithValue(ctx, primaryKey{}, true)
}

// fromReplica reports whether a statement on ctx, sent through pool, goes to the
// replica.
func fromReplica(ctx context.Context, pool gorm.ConnPool) bool {
	if lag, _ := ctx.Value(mayLagKey{}).(bool); !lag {
		return false
	}
	if primary, _ := ctx.Value(primaryKey{}).(bool); primary {
		return false
	}
	_, inTx := pool.(gorm.TxCommitter)
	return !inTx
}

// useReplica installs, on db's reads, the switch of a statement to replica's pool
// (fromReplica).
func useReplica(db *gorm.DB, replica *sql.DB) error {
	route := func(tx *gorm.DB) {
		if tx.Statement.Context != nil && fromReplica(tx.Statement.Context, tx.Statement.ConnPool) {
			tx.Statement.ConnPool = replica
		}
	}
	cb := db.Callback()
	if err := cb.Query().Before("gorm:query").Register("riskapi:read_replica", route); err != nil {
		return err
	}
	return cb.Row().Before("gorm:row").Register("riskapi:read_replica", route)
}
