package database

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// LockXact takes a transaction-scoped lock on the name joined from parts, held
// until the transaction ctx carries ends: pg_advisory_xact_lock on PostgreSQL,
// keyed by the first 8 bytes of the name's SHA-256 (a collision only makes two
// names wait for each other). On SQLite it does nothing, since writers already
// take turns at the write gate (writegate.go). Use it for check-then-insert rules
// a unique index cannot express, such as "at most N per tenant". It works through
// a transaction pooler: the lock ends with the transaction, not the session.
// Errors: ctx carries no transaction; the store's.
func LockXact(ctx context.Context, db *gorm.DB, dialect Dialect, parts ...string) error {
	if dialect != Postgres {
		return nil
	}
	if !InTx(ctx) {
		return errLockOutsideTx
	}
	name := strings.Join(parts, "\x00")
	h := sha256.Sum256([]byte(name))
	id := int64(binary.BigEndian.Uint64(h[:8]))
	if err := Conn(ctx, db).Exec("SELECT pg_advisory_xact_lock(?)", id).Error; err != nil {
		return fmt.Errorf("lock %s: %w", parts[0], err)
	}
	return nil
}

var errLockOutsideTx = errors.New("database: LockXact needs a transaction in ctx")
