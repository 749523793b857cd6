// Package gormstore is the idempotency engine's Store on GORM, for PostgreSQL (shared
// by any number of instances) and SQLite (one process).
//
// A reservation is a database transaction holding a transaction-scoped lock on the
// key: pg_try_advisory_xact_lock on PostgreSQL; on SQLite an in-process lock, the
// database being single-writer and single-process. Either lock dies with its
// transaction, and the transaction dies with its process (or, on PostgreSQL, with
// idle_in_transaction_session_timeout if the process hangs), so an abandoned key is
// free at once and only the lock holder can ever commit.
package gormstore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/idempotency"
)

// Store implements idempotency.Store over the idempotency_records table.
type Store struct {
	db      *gorm.DB
	dialect database.Dialect
	local   *localLocks // SQLite only
}

var _ idempotency.Store = (*Store)(nil)

// New returns a Store over db. The table comes from riskapi's migrations.
func New(db *database.DB) *Store {
	return &Store{db: db.DB, dialect: db.Dialect, local: &localLocks{held: map[idempotency.RecordKey]struct{}{}}}
}

type row struct {
	Scope       string `gorm:"primaryKey"`
	Method      string `gorm:"primaryKey"`
	Path        string `gorm:"primaryKey"`
	IdemKey     string `gorm:"primaryKey"`
	Fingerprint string
	State       string
	StatusCode  int
	ContentType string
	Body        []byte
	CreatedAt   time.Time
	UpdatedAt   time.Time
	ExpiresAt   time.Time
}

func (row) TableName() string { return "idempotency_records" }

func toRow(r *idempotency.Record) *row {
	return &row{Scope: r.Scope, Method: r.Method, Path: r.Path, IdemKey: r.Key,
		Fingerprint: r.Fingerprint, State: string(r.State), StatusCode: r.StatusCode,
		ContentType: r.ContentType, Body: r.Body, CreatedAt: r.CreatedAt.UTC(),
		UpdatedAt: r.CreatedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC()}
}

func toRecord(w *row) *idempotency.Record {
	return &idempotency.Record{
		RecordKey:   idempotency.RecordKey{Scope: w.Scope, Method: w.Method, Path: w.Path, Key: w.IdemKey},
		Fingerprint: w.Fingerprint, State: idempotency.State(w.State), StatusCode: w.StatusCode,
		ContentType: w.ContentType, Body: w.Body, CreatedAt: w.CreatedAt.UTC(), ExpiresAt: w.ExpiresAt.UTC()}
}

func where(db *gorm.DB, k idempotency.RecordKey) *gorm.DB {
	return db.Where("scope = ? AND method = ? AND path = ? AND idem_key = ?", k.Scope, k.Method, k.Path, k.Key)
}

// Get returns the committed record for k, or idempotency.ErrNotFound.
func (s *Store) Get(ctx context.Context, k idempotency.RecordKey) (*idempotency.Record, error) {
	return get(where(s.db.WithContext(ctx), k))
}

func get(q *gorm.DB) (*idempotency.Record, error) {
	var w row
	err := q.Take(&w).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, idempotency.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get idempotency record: %w", database.Classify(err))
	}
	return toRecord(&w), nil
}

// Reserve begins a transaction and takes k's lock in it, or returns
// idempotency.ErrLocked at once. The record is then read under the lock.
func (s *Store) Reserve(ctx context.Context, k idempotency.RecordKey) (idempotency.Reservation, error) {
	unlock := func() {}
	if s.dialect == database.SQLite {
		// Take the key before SQLite's write lock, so a duplicate is refused at
		// once instead of queueing behind other writers.
		if !s.local.tryLock(k) {
			return nil, idempotency.ErrLocked
		}
		unlock = func() { s.local.unlock(k) }
	}
	tx := s.db.WithContext(ctx).Begin()
	if tx.Error != nil {
		unlock()
		return nil, fmt.Errorf("begin: %w", database.Classify(tx.Error))
	}
	r := &reservation{tx: tx, unlock: unlock}
	if s.dialect == database.Postgres {
		var ok bool
		if err := tx.Raw("SELECT pg_try_advisory_xact_lock(?)", lockID(k)).Scan(&ok).Error; err != nil {
			r.Release()
			return nil, fmt.Errorf("lock key: %w", database.Classify(err))
		}
		if !ok {
			r.Release()
			return nil, idempotency.ErrLocked
		}
	}
	// Read after locking, in a fresh statement: under READ COMMITTED it sees every
	// attempt that committed before the lock was ours.
	rec, err := get(where(tx, k))
	switch {
	case err == nil:
		r.existing = rec
	case errors.Is(err, idempotency.ErrNotFound):
	default:
		r.Release()
		return nil, err
	}
	return r, nil
}

// lockID maps a key to PostgreSQL's 64-bit advisory lock space. A collision between
// two keys only makes one of them wait for a 409 retry; it can never merge records.
func lockID(k idempotency.RecordKey) int64 {
	h := sha256.New()
	for _, part := range []string{k.Scope, k.Method, k.Path, k.Key} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return int64(binary.BigEndian.Uint64(h.Sum(nil)[:8]))
}

// MarkFailed upserts rec as FAILED unless the stored record is COMPLETE and live at
// now: the reservation is already released, and a concurrent attempt may have
// succeeded meanwhile.
func (s *Store) MarkFailed(ctx context.Context, rec *idempotency.Record, now time.Time) error {
	w := toRow(rec)
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "scope"}, {Name: "method"}, {Name: "path"}, {Name: "idem_key"}},
		DoUpdates: clause.AssignmentColumns([]string{"fingerprint", "state", "status_code", "content_type", "body", "updated_at", "expires_at"}),
		Where: clause.Where{Exprs: []clause.Expression{clause.Expr{
			SQL:  "idempotency_records.state <> ? OR idempotency_records.expires_at <= ?",
			Vars: []any{string(idempotency.StateComplete), now.UTC()},
		}}},
	}).Create(w).Error
	if err != nil {
		return fmt.Errorf("mark idempotency record failed: %w", database.Classify(err))
	}
	return nil
}

// DeleteExpired deletes at most limit records expired at now, oldest first. On
// PostgreSQL rows locked by a running reservation are skipped, and the expiry is
// checked again on the row being deleted, so a record re-reserved and completed after
// expiring survives; concurrent sweepers take disjoint batches.
func (s *Store) DeleteExpired(ctx context.Context, now time.Time, limit int) (int, error) {
	var q string
	switch s.dialect {
	case database.Postgres:
		q = `DELETE FROM idempotency_records WHERE ctid IN (
			SELECT ctid FROM idempotency_records WHERE expires_at <= ? ORDER BY expires_at LIMIT ?
			FOR UPDATE SKIP LOCKED) AND expires_at <= ?`
	default:
		q = `DELETE FROM idempotency_records WHERE rowid IN (
			SELECT rowid FROM idempotency_records WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)
			AND expires_at <= ?`
	}
	res := s.db.WithContext(ctx).Exec(q, now.UTC(), limit, now.UTC())
	if res.Error != nil {
		return 0, fmt.Errorf("sweep idempotency records: %w", database.Classify(res.Error))
	}
	return int(res.RowsAffected), nil
}

// reservation is one open transaction holding one key.
type reservation struct {
	tx       *gorm.DB
	unlock   func()
	existing *idempotency.Record
	once     sync.Once
}

func (r *reservation) Existing() *idempotency.Record { return r.existing }

func (r *reservation) Context(ctx context.Context) context.Context {
	return database.WithTx(ctx, r.tx)
}

// Complete upserts rec in the transaction and commits it with the handler's writes.
func (r *reservation) Complete(ctx context.Context, rec *idempotency.Record) error {
	w := toRow(rec)
	err := r.tx.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "scope"}, {Name: "method"}, {Name: "path"}, {Name: "idem_key"}},
		DoUpdates: clause.AssignmentColumns([]string{"fingerprint", "state", "status_code", "content_type", "body", "created_at", "updated_at", "expires_at"}),
	}).Create(w).Error
	if err != nil {
		r.Release()
		return fmt.Errorf("store idempotency record: %w", database.Classify(err))
	}
	err = r.tx.Commit().Error
	r.done()
	if err != nil {
		return fmt.Errorf("commit: %w", database.Classify(err))
	}
	return nil
}

// Release rolls back and frees the key; calling it again is a no-op.
func (r *reservation) Release() error {
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

func (r *reservation) done() { r.once.Do(r.unlock) }

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
