package gormstore

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/idempotency"
)

// reserveSQLite takes the in-process key lock, then reads the record. One process
// owns the database, and every write to a key's record is made under its lock
// (Complete) or cannot undo a COMPLETE one (MarkFailed, the sweep), so a read made
// while holding the lock is a read under it — no transaction is needed for it. The
// transaction begins only when the engine decides to run (Begin): a replay never
// takes SQLite's single write lock, and a duplicate is refused at once instead of
// queueing behind other writers.
func (s *Store) reserveSQLite(ctx context.Context, k idempotency.RecordKey) (idempotency.Observation, error) {
	locked := s.local.tryLock(k)
	rec, err := s.Lookup(ctx, k)
	switch {
	case err != nil:
		if locked {
			s.local.unlock(k)
		}
		return idempotency.Observation{}, err
	case !locked:
		return idempotency.Observation{Record: rec}, nil
	}
	return idempotency.Observation{Record: rec, Held: &sqliteReservation{db: s.db, unlock: func() { s.local.unlock(k) }}}, nil
}

// sqliteReservation is one key's lock and, once begun, the IMMEDIATE transaction the
// request runs in.
type sqliteReservation struct {
	db      *gorm.DB
	pending *database.PendingTx // nil until Begin
	leave   func()              // frees the write gate (database.EnterWrite) once the transaction has ended
	unlock  func()
	once    sync.Once
}

// Begin returns ctx carrying the request's transaction, which begins — takes the
// write gate, then SQLite's lock — with the handler's first statement
// (database.PendingTx): the handler decodes and checks the request outside the
// single writer's turn, as an unkeyed write does. The key's lock, taken without
// waiting in Reserve, is held meanwhile, so a duplicate is answered 409 at once
// rather than queueing at the gate.
func (r *sqliteReservation) Begin(ctx context.Context) (context.Context, error) {
	r.pending = database.NewPendingTx(func() (*gorm.DB, error) { return r.begin(ctx) })
	return database.WithPendingTx(ctx, r.pending), nil
}

func (r *sqliteReservation) begin(ctx context.Context) (*gorm.DB, error) {
	leave, err := database.EnterWrite(ctx, r.db)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", database.Classify(err))
	}
	tx := r.db.WithContext(ctx).Begin()
	if tx.Error != nil {
		leave()
		return nil, fmt.Errorf("begin: %w", database.Classify(tx.Error))
	}
	r.leave = leave
	return tx, nil
}

// Complete upserts rec in the transaction (begun now if the handler sent no
// statement) and commits it with the handler's writes.
func (r *sqliteReservation) Complete(ctx context.Context, rec *idempotency.Record) error {
	tx, err := r.pending.Tx()
	if err != nil {
		r.Release()
		return fmt.Errorf("store idempotency record: %w", err)
	}
	if err := tx.WithContext(ctx).Clauses(upsertComplete).Create(toRow(rec)).Error; err != nil {
		r.Release()
		return fmt.Errorf("store idempotency record: %w", err)
	}
	err = tx.Commit().Error
	r.once.Do(func() {
		r.leave()
		r.unlock()
	})
	if err != nil {
		return commitErr(err)
	}
	return nil
}

// Release rolls back, if a transaction began, and frees the key; calling it again
// is a no-op.
func (r *sqliteReservation) Release() error {
	var err error
	r.once.Do(func() {
		var tx *gorm.DB
		if r.pending != nil {
			tx = r.pending.Begun()
		}
		if tx != nil {
			err = tx.Rollback().Error
			if errors.Is(err, gorm.ErrInvalidTransaction) {
				err = nil // already ended, e.g. by its context's deadline
			}
			r.leave()
		}
		r.unlock()
	})
	return err
}

// upsertComplete stores a COMPLETE record over whatever FAILED or expired one the
// key had.
var upsertComplete = clause.OnConflict{
	Columns:   []clause.Column{{Name: "scope"}, {Name: "method"}, {Name: "path"}, {Name: "idem_key"}},
	DoUpdates: clause.AssignmentColumns([]string{"fingerprint", "state", "status_code", "content_type", "headers", "body", "created_at", "updated_at", "expires_at", "request_id"}),
}

// localLocks is SQLite's key lock: one process owns the database file.
type localLocks struct {
	mu   sync.Mutex
	held map[idempotency.RecordKey]struct{}
}

func (l *localLocks) tryLock(k idempotency.RecordKey) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, busy := l.held[k]; busy {
		return false
	}
	l.held[k] = struct{}{}
	return true
}

func (l *localLocks) unlock(k idempotency.RecordKey) {
	l.mu.Lock()
	delete(l.held, k)
	l.mu.Unlock()
}
