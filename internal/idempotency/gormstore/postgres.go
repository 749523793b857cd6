package gormstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/idempotency"
)

const upsertRecord = `INSERT INTO idempotency_records
	(scope, method, path, idem_key, fingerprint, state, status_code, content_type, body, created_at, updated_at, expires_at, headers, request_id)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11, $12, $13)
	ON CONFLICT (scope, method, path, idem_key) DO UPDATE SET
	fingerprint = excluded.fingerprint, state = excluded.state, status_code = excluded.status_code,
	content_type = excluded.content_type, headers = excluded.headers, body = excluded.body, created_at = excluded.created_at,
	updated_at = excluded.updated_at, expires_at = excluded.expires_at, request_id = excluded.request_id`

// reserveRecord calls idempotency_reserve (migration 0008): the key's advisory lock,
// then the record read in a statement of its own, so under READ COMMITTED its
// snapshot is taken after the lock is held and sees every attempt that committed
// before.
const reserveRecord = `SELECT locked, (rec).idem_key IS NOT NULL, coalesce((rec).fingerprint, ''),
	coalesce((rec).state, ''), coalesce((rec).status_code, 0), coalesce((rec).content_type, ''), coalesce((rec).headers, ''), (rec).body,
	coalesce((rec).created_at, 'epoch'), coalesce((rec).expires_at, 'epoch'), (rec).request_id
	FROM idempotency_reserve($1, $2, $3, $4, $5)`

// reservePostgres sends BEGIN and idempotency_reserve (lock and read in one
// statement) as one pipeline on a pinned connection. The record is returned whether
// or not the lock was free: the engine decides what it means. Taking the connection
// and the pipeline are one store call, bounded like every other (database.Bound):
// they pass GORM's callbacks.
func (s *Store) reservePostgres(ctx context.Context, k idempotency.RecordKey) (idempotency.Observation, error) {
	call, cancel := database.Bound(ctx)
	defer cancel()
	conn, err := s.sqlDB.Conn(call)
	if err != nil {
		return idempotency.Observation{}, fmt.Errorf("reserve: %w", database.Classify(err))
	}
	r := &pgReservation{conn: conn}
	var locked bool
	var rec *idempotency.Record
	err = r.conn.Raw(func(dc any) error {
		// BEGIN with the transaction's bounds (SET LOCAL), in the same round trip.
		begin := database.BeginStatements(dc)
		b := &pgx.Batch{}
		for _, q := range begin {
			b.Queue(q)
		}
		b.Queue(reserveRecord, lockID(k), k.Scope, k.Method, k.Path, k.Key)
		br := database.PgxConn(dc).SendBatch(call, b)
		defer br.Close()
		for range begin {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		var found bool
		var state, headers string
		var requestID *string
		rec = &idempotency.Record{RecordKey: k}
		if err := br.QueryRow().Scan(&locked, &found, &rec.Fingerprint, &state, &rec.StatusCode,
			&rec.ContentType, &headers, &rec.Body, &rec.CreatedAt, &rec.ExpiresAt, &requestID); err != nil {
			return err
		}
		if !found {
			rec = nil
			return nil
		}
		rec.State = idempotency.State(state)
		rec.Headers = decodeHeaders(headers)
		if requestID != nil {
			rec.RequestID = *requestID
		}
		rec.CreatedAt, rec.ExpiresAt = rec.CreatedAt.UTC(), rec.ExpiresAt.UTC()
		return nil
	})
	if err != nil {
		r.Release()
		return idempotency.Observation{}, fmt.Errorf("reserve: %w", database.Classify(err))
	}
	if !locked {
		r.Release()
		return idempotency.Observation{Record: rec}, nil
	}
	// Handlers write through GORM on the same connection, inside the same transaction.
	tx := s.db.Session(&gorm.Session{Context: ctx, SkipDefaultTransaction: true})
	tx.Statement.ConnPool = pinnedTx{conn}
	r.tx = tx
	return idempotency.Observation{Record: rec, Held: r}, nil
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

// pgReservation is an explicit transaction on one pinned connection.
type pgReservation struct {
	conn *sql.Conn
	tx   *gorm.DB
	once sync.Once
}

// pgx runs f on the pinned connection's pgx.Conn.
func (r *pgReservation) pgx(f func(*pgx.Conn) error) error {
	return r.conn.Raw(func(dc any) error { return f(database.PgxConn(dc)) })
}

// Begin returns ctx carrying the transaction, which the reservation's pipeline began.
func (r *pgReservation) Begin(ctx context.Context) (context.Context, error) {
	return database.WithTx(ctx, r.tx), nil
}

// Complete sends the record's upsert and COMMIT as one pipeline, one store call
// bounded like every other (database.Bound). If the upsert fails the server skips
// the COMMIT and the transaction is rolled back.
func (r *pgReservation) Complete(ctx context.Context, rec *idempotency.Record) error {
	ctx, cancel := database.Bound(ctx)
	defer cancel()
	var tag string
	err := r.pgx(func(pc *pgx.Conn) error {
		b := &pgx.Batch{}
		b.Queue(upsertRecord, rec.Scope, rec.Method, rec.Path, rec.Key, rec.Fingerprint, string(rec.State),
			rec.StatusCode, rec.ContentType, rec.Body, rec.CreatedAt.UTC(), rec.ExpiresAt.UTC(), encodeHeaders(rec.Headers), nullable(rec.RequestID))
		b.Queue("COMMIT")
		br := pc.SendBatch(ctx, b)
		defer br.Close()
		if _, err := br.Exec(); err != nil {
			return err
		}
		ct, err := br.Exec()
		tag = ct.String()
		return err
	})
	if err == nil && tag != "COMMIT" {
		// COMMIT of a transaction the handler left aborted answers ROLLBACK.
		err = fmt.Errorf("transaction was rolled back (%s)", tag)
	}
	if err != nil {
		r.Release()
		return commitErr(err)
	}
	r.once.Do(func() { r.conn.Close() })
	return nil
}

// Release rolls back and returns the connection; calling it again is a no-op. A
// connection whose rollback fails is discarded, never reused mid-transaction.
func (r *pgReservation) Release() error {
	var err error
	r.once.Do(func() {
		// A fresh deadline: the reservation's own may be what ended it.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err = r.conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			r.conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		r.conn.Close()
	})
	return err
}

// pinnedTx is the handler's view of the reservation's connection. It satisfies
// gorm.TxCommitter so that a handler's nested db.Transaction uses savepoints rather
// than a second BEGIN; only the reservation may end the transaction.
type pinnedTx struct{ *sql.Conn }

var errOwnedByReservation = errors.New("the idempotency reservation owns this transaction")

func (pinnedTx) Commit() error   { return errOwnedByReservation }
func (pinnedTx) Rollback() error { return errOwnedByReservation }
