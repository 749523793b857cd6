package gormstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/idempotency"
)

// reserveSQLite reads k without a lock first — most retries end there, and SQLite's
// write lock is too precious to take for a replay — then takes the in-process key
// lock, begins an IMMEDIATE transaction and reads again under both.
func (s *Store) reserveSQLite(ctx context.Context, k idempotency.RecordKey, now time.Time) (idempotency.Reservation, *idempotency.Record, error) {
	rec, err := s.Get(ctx, k)
	switch {
	case err == nil:
		if rec.Answers(now) {
			return nil, rec, nil
		}
	case errors.Is(err, idempotency.ErrNotFound):
		rec = nil
	default:
		return nil, nil, err
	}
	// The key before SQLite's write lock, so a duplicate is refused at once instead
	// of queueing behind other writers.
	if !s.local.tryLock(k) {
		return nil, rec, idempotency.ErrLocked
	}
	tx := s.db.WithContext(ctx).Begin()
	if tx.Error != nil {
		s.local.unlock(k)
		return nil, nil, fmt.Errorf("begin: %w", database.Classify(tx.Error))
	}
	r := &sqliteReservation{tx: tx, unlock: func() { s.local.unlock(k) }}
	prev, err := get(where(tx, k))
	switch {
	case err == nil:
		if prev.Answers(now) { // completed between the two reads
			r.Release()
			return nil, prev, nil
		}
		return r, prev, nil
	case errors.Is(err, idempotency.ErrNotFound):
		return r, nil, nil
	default:
		r.Release()
		return nil, nil, err
	}
}

// sqliteReservation is one IMMEDIATE transaction holding one key.
type sqliteReservation struct {
	tx     *gorm.DB
	unlock func()
	once   sync.Once
}

func (r *sqliteReservation) Context(ctx context.Context) context.Context {
	return database.WithTx(ctx, r.tx)
}

// Complete upserts rec in the transaction and commits it with the handler's writes.
func (r *sqliteReservation) Complete(ctx context.Context, rec *idempotency.Record) error {
	if err := r.tx.WithContext(ctx).Clauses(upsertComplete).Create(toRow(rec)).Error; err != nil {
		r.Release()
		return fmt.Errorf("store idempotency record: %w", database.Classify(err))
	}
	err := r.tx.Commit().Error
	r.once.Do(r.unlock)
	if err != nil {
		return fmt.Errorf("commit: %w", database.Classify(err))
	}
	return nil
}

// Release rolls back and frees the key; calling it again is a no-op.
func (r *sqliteReservation) Release() error {
	var err error
	r.once.Do(func() {
		err = r.tx.Rollback().Error
		if errors.Is(err, gorm.ErrInvalidTransaction) {
			err = nil // already ended, e.g. by its context's deadline
		}
		r.unlock()
	})
	return err
}

// upsertComplete stores a COMPLETE record over whatever FAILED or expired one the
// key had.
var upsertComplete = clause.OnConflict{
	Columns:   []clause.Column{{Name: "scope"}, {Name: "method"}, {Name: "path"}, {Name: "idem_key"}},
	DoUpdates: clause.AssignmentColumns([]string{"fingerprint", "state", "status_code", "content_type", "body", "created_at", "updated_at", "expires_at"}),
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
