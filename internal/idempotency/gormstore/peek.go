package gormstore

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/idempotency"
)

// advisoryHeld asks pg_locks whether any session of this database holds k's
// advisory lock. PostgreSQL shows a bigint advisory key as classid (high 32 bits),
// objid (low 32 bits) and objsubid 1. Reading pg_locks takes no lock and never
// waits for one.
const advisoryHeld = `SELECT EXISTS (SELECT 1 FROM pg_locks
	WHERE locktype = 'advisory' AND granted AND objsubid = 1
	AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND classid = CAST(? AS bigint)::oid AND objid = CAST(? AS bigint)::oid)`

// Held implements idempotency.Store.Held: on PostgreSQL whether any session holds
// k's advisory lock (pg_locks), on SQLite whether this process holds k's in-process
// lock. It takes no lock and never waits for one.
func (s *Store) Held(ctx context.Context, k idempotency.RecordKey) (bool, error) {
	if s.dialect != database.Postgres {
		return s.local.isHeld(k), nil
	}
	var locked bool
	id := uint64(lockID(k))
	if err := s.db.WithContext(ctx).Raw(advisoryHeld, int64(id>>32), int64(id&0xffffffff)).Scan(&locked).Error; err != nil {
		return false, fmt.Errorf("peek idempotency lock: %w", database.Classify(err))
	}
	return locked, nil
}

// Peek reports what a reader sees of k without taking or waiting for its lock: the
// committed record (nil when there is none) and whether a request holds the key now
// (PROCESSING, Held). The two are read one after the other, not atomically; a caller
// that finds both a live COMPLETE record and the lock held should trust the record,
// as the engine does.
func (s *Store) Peek(ctx context.Context, k idempotency.RecordKey) (*idempotency.Record, bool, error) {
	locked, err := s.Held(ctx, k)
	if err != nil {
		return nil, false, err
	}
	var w row
	err = where(s.db.WithContext(ctx), k).Take(&w).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, locked, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("peek idempotency record: %w", err)
	}
	return toRecord(&w), locked, nil
}

// isHeld reports whether k is locked, without locking it.
func (l *localLocks) isHeld(k idempotency.RecordKey) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, busy := l.held[k]
	return busy
}
