// Package gormstore is the idempotency engine's Store on GORM, for PostgreSQL (shared
// by any number of instances) and SQLite (one process).
//
// A reservation is a database transaction holding a transaction-scoped lock on the
// key: pg_try_advisory_xact_lock on PostgreSQL; on SQLite an in-process lock, the
// database being single-writer and single-process. Either lock dies with its
// transaction, and the transaction dies with its process (or, on PostgreSQL, with
// idle_in_transaction_session_timeout if the process hangs), so an abandoned key is
// free at once and only the lock holder can ever commit.
//
// Round trips are the cost of a keyed write on PostgreSQL, so its reservation
// pipelines them (pgx batches on one pinned connection): BEGIN, the lock and the
// read under it travel together, and so do the record's upsert and COMMIT.
package gormstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/idempotency"
)

// Store implements idempotency.Store over the idempotency_records table.
type Store struct {
	db      *gorm.DB
	sqlDB   *sql.DB // db's pool, for the statements that skip GORM (PostgreSQL)
	dialect database.Dialect
	local   *localLocks // SQLite only
}

// Reserve implements idempotency.Store.Reserve for the store's dialect.
func (s *Store) Reserve(ctx context.Context, k idempotency.RecordKey) (idempotency.Observation, error) {
	if s.dialect == database.Postgres {
		if s.sqlDB == nil {
			return idempotency.Observation{}, errNoPool
		}
		return s.reservePostgres(ctx, k)
	}
	return s.reserveSQLite(ctx, k)
}

var _ idempotency.Store = (*Store)(nil)

// New returns a Store over db. The table comes from riskapi's migrations.
func New(db *database.DB) *Store {
	// database.Open's handle always wraps a *sql.DB; any other leaves sqlDB nil, and
	// the PostgreSQL paths then fail closed (errNoPool).
	sqlDB, _ := db.DB.DB()
	return &Store{db: db.DB, sqlDB: sqlDB, dialect: db.Dialect, local: &localLocks{held: map[idempotency.RecordKey]struct{}{}}}
}

var errNoPool = errors.New("idempotency store: GORM handle has no *sql.DB pool")

type row struct {
	Scope       string `gorm:"primaryKey"`
	Method      string `gorm:"primaryKey"`
	Path        string `gorm:"primaryKey"`
	IdemKey     string `gorm:"primaryKey"`
	Fingerprint string
	State       string
	StatusCode  int
	ContentType string
	Headers     string // Record.Headers as a JSON object, "" when none
	Body        []byte
	CreatedAt   time.Time
	UpdatedAt   time.Time
	ExpiresAt   time.Time
	// RequestID is NULL on records written before the column existed.
	RequestID *string
}

func (row) TableName() string { return "idempotency_records" }

func toRow(r *idempotency.Record) *row {
	return &row{Scope: r.Scope, Method: r.Method, Path: r.Path, IdemKey: r.Key,
		Fingerprint: r.Fingerprint, State: string(r.State), StatusCode: r.StatusCode,
		ContentType: r.ContentType, Headers: encodeHeaders(r.Headers), Body: r.Body, CreatedAt: r.CreatedAt.UTC(),
		UpdatedAt: r.CreatedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC(), RequestID: nullable(r.RequestID)}
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toRecord(w *row) *idempotency.Record {
	rec := &idempotency.Record{
		RecordKey:   idempotency.RecordKey{Scope: w.Scope, Method: w.Method, Path: w.Path, Key: w.IdemKey},
		Fingerprint: w.Fingerprint, State: idempotency.State(w.State), StatusCode: w.StatusCode,
		ContentType: w.ContentType, Headers: decodeHeaders(w.Headers), Body: w.Body,
		CreatedAt: w.CreatedAt.UTC(), ExpiresAt: w.ExpiresAt.UTC()}
	if w.RequestID != nil {
		rec.RequestID = *w.RequestID
	}
	return rec
}

// encodeHeaders stores a record's kept headers as a JSON object ("" for none).
func encodeHeaders(h map[string]string) string {
	if len(h) == 0 {
		return ""
	}
	b, _ := json.Marshal(h) // a map of strings always marshals
	return string(b)
}

// decodeHeaders reads what encodeHeaders stored. A value it cannot read replays
// without headers rather than failing the replay: the body and status are intact.
func decodeHeaders(s string) map[string]string {
	if s == "" {
		return nil
	}
	var h map[string]string
	if json.Unmarshal([]byte(s), &h) != nil {
		return nil
	}
	return h
}

func where(db *gorm.DB, k idempotency.RecordKey) *gorm.DB {
	return db.Where("scope = ? AND method = ? AND path = ? AND idem_key = ?", k.Scope, k.Method, k.Path, k.Key)
}

// Lookup implements idempotency.Store.Lookup: k's committed record, nil if there is
// none, read without a lock or a transaction. It is one SELECT sent through
// database/sql rather than GORM, whose reflection would cost more CPU than the read
// itself on a replay's path. Tests and operators read records with it too.
func (s *Store) Lookup(ctx context.Context, k idempotency.RecordKey) (*idempotency.Record, error) {
	if s.sqlDB == nil {
		return nil, errNoPool
	}
	q := selectRecord
	if s.dialect != database.Postgres {
		q = selectRecordSQLite
	}
	ctx, cancel := database.Bound(ctx)
	defer cancel()
	rec := &idempotency.Record{RecordKey: k}
	var state, headers string
	var requestID sql.NullString
	err := s.sqlDB.QueryRowContext(ctx, q, k.Scope, k.Method, k.Path, k.Key).Scan(
		&rec.Fingerprint, &state, &rec.StatusCode, &rec.ContentType, &headers, &rec.Body,
		&rec.CreatedAt, &rec.ExpiresAt, &requestID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look up idempotency record: %w", database.Classify(err))
	}
	rec.State = idempotency.State(state)
	rec.Headers = decodeHeaders(headers)
	rec.RequestID = requestID.String // NULL on records written before the column existed
	rec.CreatedAt, rec.ExpiresAt = rec.CreatedAt.UTC(), rec.ExpiresAt.UTC()
	return rec, nil
}

// selectRecord reads one record (PostgreSQL placeholders); selectRecordSQLite is
// the same with SQLite's.
const (
	selectRecord = `SELECT fingerprint, state, status_code, content_type, headers, body, created_at, expires_at, request_id
	FROM idempotency_records WHERE scope = $1 AND method = $2 AND path = $3 AND idem_key = $4`
	selectRecordSQLite = `SELECT fingerprint, state, status_code, content_type, headers, body, created_at, expires_at, request_id
	FROM idempotency_records WHERE scope = ? AND method = ? AND path = ? AND idem_key = ?`
)

// MarkFailed upserts rec as FAILED unless the stored record is COMPLETE and live at
// now: the reservation is already released, and a concurrent attempt may have
// succeeded meanwhile.
func (s *Store) MarkFailed(ctx context.Context, rec *idempotency.Record, now time.Time) error {
	w := toRow(rec)
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "scope"}, {Name: "method"}, {Name: "path"}, {Name: "idem_key"}},
		DoUpdates: clause.AssignmentColumns([]string{"fingerprint", "state", "status_code", "content_type", "headers", "body", "updated_at", "expires_at", "request_id"}),
		Where: clause.Where{Exprs: []clause.Expression{clause.Expr{
			SQL:  "idempotency_records.state <> ? OR idempotency_records.expires_at <= ?",
			Vars: []any{string(idempotency.StateComplete), now.UTC()},
		}}},
	}).Create(w).Error
	if err != nil {
		return fmt.Errorf("mark idempotency record failed: %w", err)
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
		return 0, fmt.Errorf("sweep idempotency records: %w", res.Error)
	}
	return int(res.RowsAffected), nil
}

// commitErr is the error of a Complete whose COMMIT failed: classified, and wrapping
// idempotency.ErrOutcomeUnknown when the COMMIT may have reached the store before the
// connection was lost (database.CommitFailed says when).
func commitErr(err error) error {
	err = database.CommitFailed(err)
	if errors.Is(err, database.ErrOutcomeUnknown) {
		return fmt.Errorf("complete: %w: %w", idempotency.ErrOutcomeUnknown, err)
	}
	return fmt.Errorf("complete: %w", err)
}
