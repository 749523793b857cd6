// Package requestlogstore stores request-log entries with GORM on SQLite or
// PostgreSQL. Its row type and GORM tags stay here; the domain type knows nothing
// of them.
package requestlogstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/requestlog"
)

// Store implements requestlog.Store over the request_log_entries table.
type Store struct {
	db      *gorm.DB
	dialect database.Dialect
}

var _ requestlog.Store = (*Store)(nil)

// New returns a Store over db. The table comes from riskapi's migrations.
func New(db *database.DB) *Store { return &Store{db: db.DB, dialect: db.Dialect} }

type row struct {
	ID                 string
	TenantID           string
	RequestID          string
	Method             string
	Path               string
	Route              string
	Status             int
	DurationUs         int64
	CredentialType     string
	CredentialID       string
	IdempotencyKey     *string
	IdempotencyOutcome *string
	ErrorCode          *string
	StoreOutcome       *string
	Via                *string // migration 0018: NULL but for MCP tool calls
	Client             *string
	APIVersion         string
	// Set by the request's own clock, never GORM's.
	CreatedAt time.Time `gorm:"autoCreateTime:false"`
}

func (row) TableName() string { return "request_log_entries" }

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func toRow(e *requestlog.Entry) row {
	return row{ID: e.ID, TenantID: e.TenantID, RequestID: e.RequestID, Method: e.Method, Path: e.Path,
		Route: e.Route, Status: e.Status, DurationUs: e.Duration.Microseconds(),
		CredentialType: e.Credential.Type, CredentialID: e.Credential.ID,
		IdempotencyKey: nullable(e.IdempotencyKey), IdempotencyOutcome: nullable(string(e.IdempotencyOutcome)),
		ErrorCode: nullable(e.ErrorCode), StoreOutcome: nullable(e.StoreOutcome),
		Via: nullable(e.Via), Client: nullable(e.Client), APIVersion: e.APIVersion,
		CreatedAt: e.CreatedAt.UTC().Truncate(time.Microsecond)}
}

func toEntry(w *row) *requestlog.Entry {
	return &requestlog.Entry{ID: w.ID, RequestID: w.RequestID, TenantID: w.TenantID, Method: w.Method, Path: w.Path,
		Route: w.Route, Status: w.Status, Duration: time.Duration(w.DurationUs) * time.Microsecond,
		Credential:     requestlog.Credential{Type: w.CredentialType, ID: w.CredentialID},
		IdempotencyKey: deref(w.IdempotencyKey), IdempotencyOutcome: requestlog.Outcome(deref(w.IdempotencyOutcome)),
		ErrorCode: deref(w.ErrorCode), StoreOutcome: deref(w.StoreOutcome),
		Via: deref(w.Via), Client: deref(w.Client), APIVersion: w.APIVersion, CreatedAt: w.CreatedAt.UTC()}
}

// Insert stores entries in one durable commit, outside any request's transaction:
// on PostgreSQL one COPY (no SQL to parse, binary rows); on SQLite one prepared
// single-row INSERT executed per entry in one transaction, which needs neither a
// statement journal nor the driver's binding of thousands of parameters (both
// measured to dominate a multi-row INSERT there).
func (s *Store) Insert(ctx context.Context, entries []*requestlog.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	var err error
	if s.dialect == database.Postgres {
		err = s.copyIn(ctx, entries)
	} else {
		err = s.insertPrepared(ctx, entries)
	}
	if err != nil {
		return fmt.Errorf("insert request log entries: %w", database.Classify(err))
	}
	return nil
}

const insertEntry = `INSERT INTO request_log_entries (tenant_id, id, request_id, method, path, route,
	status, duration_us, credential_type, credential_id, idempotency_key, idempotency_outcome,
	error_code, store_outcome, created_at, via, client, api_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

var entryColumns = []string{"tenant_id", "id", "request_id", "method", "path", "route", "status", "duration_us",
	"credential_type", "credential_id", "idempotency_key", "idempotency_outcome", "error_code", "store_outcome", "created_at", "via", "client", "api_version"}

// values are w's columns in entryColumns' order.
func (w row) values() []any {
	return []any{w.TenantID, w.ID, w.RequestID, w.Method, w.Path, w.Route, w.Status, w.DurationUs,
		w.CredentialType, w.CredentialID, w.IdempotencyKey, w.IdempotencyOutcome, w.ErrorCode, w.StoreOutcome, w.CreatedAt, w.Via, w.Client, w.APIVersion}
}

func (s *Store) copyIn(ctx context.Context, entries []*requestlog.Entry) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		_, err := database.PgxConn(dc).CopyFrom(ctx, pgx.Identifier{"request_log_entries"}, entryColumns,
			pgx.CopyFromSlice(len(entries), func(i int) ([]any, error) { return toRow(entries[i]).values(), nil }))
		return err
	})
}

func (s *Store) insertPrepared(ctx context.Context, entries []*requestlog.Entry) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	// The batch queues for SQLite's one write lock with every other writer.
	leave, err := database.EnterWrite(ctx, s.db)
	if err != nil {
		return err
	}
	defer leave()
	tx, err := sqlDB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, insertEntry)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, e := range entries {
		if _, err := stmt.ExecContext(ctx, toRow(e).values()...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// tenant is a statement on the tenant's entries only, on the pool: the log is
// read and written outside any request's unit of work.
func (s *Store) tenant(ctx context.Context, tenantID string) *gorm.DB {
	return s.db.WithContext(ctx).Scopes(database.OfTenant(tenantID))
}

// List returns up to f.Limit of the tenant's entries matching f, newest first (IDs
// are UUIDv7, so ID order is creation order and stable), and whether more follow.
func (s *Store) List(ctx context.Context, tenantID string, f requestlog.Filter) ([]*requestlog.Entry, bool, error) {
	q := s.tenant(ctx, tenantID)
	if f.IdempotencyKey != "" {
		q = q.Where("idempotency_key = ?", f.IdempotencyKey)
	}
	if f.Status != 0 {
		q = q.Where("status = ?", f.Status)
	}
	if f.APIVersion != "" {
		q = q.Where("api_version = ?", f.APIVersion)
	}
	if f.Method != "" {
		q = q.Where("method = ?", f.Method)
	}
	if f.Outcome != "" {
		q = q.Where("idempotency_outcome = ?", string(f.Outcome))
	}
	if !f.Since.IsZero() {
		q = q.Where("created_at >= ?", f.Since.UTC())
	}
	if !f.Until.IsZero() {
		q = q.Where("created_at < ?", f.Until.UTC())
	}
	out, more, err := database.Page(q, database.NewestFirst, f.Before, f.Limit, toEntry)
	if err != nil {
		return nil, false, fmt.Errorf("list request log: %w", err)
	}
	return out, more, nil
}

// Get returns the tenant's newest entry with requestID, or requestlog.ErrNotFound.
func (s *Store) Get(ctx context.Context, tenantID, requestID string) (*requestlog.Entry, error) {
	var w row
	err := s.tenant(ctx, tenantID).Where("request_id = ?", requestID).
		Order("id DESC").Take(&w).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, requestlog.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get request log entry: %w", err)
	}
	return toEntry(&w), nil
}

// DeleteBefore deletes at most limit entries created before cutoff, oldest first.
// On PostgreSQL concurrent sweepers skip each other's rows (SKIP LOCKED) and take
// disjoint batches; SQLite has one writer.
func (s *Store) DeleteBefore(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	q := `DELETE FROM request_log_entries WHERE (tenant_id, id) IN (
		SELECT tenant_id, id FROM request_log_entries WHERE created_at < ? ORDER BY created_at LIMIT ?)`
	if s.dialect == database.Postgres {
		q = `DELETE FROM request_log_entries WHERE ctid IN (
		SELECT ctid FROM request_log_entries WHERE created_at < ? ORDER BY created_at LIMIT ?
		FOR UPDATE SKIP LOCKED)`
	}
	res := s.db.WithContext(ctx).Exec(q, cutoff.UTC(), limit)
	if res.Error != nil {
		return 0, fmt.Errorf("sweep request log: %w", res.Error)
	}
	return int(res.RowsAffected), nil
}
