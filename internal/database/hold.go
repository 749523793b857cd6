package database

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"
)

// Holds takes named locks that at most one holder has at a time, without waiting:
// within the process always, and across every instance on one PostgreSQL store. It
// is for work that must not run twice at once for one owner, and is long enough that
// a second caller should be told so rather than wait (one import per tenant).
type Holds struct {
	db *gorm.DB
	mu sync.Mutex
	// held are the names this process holds.
	held map[string]bool
}

// NewHolds returns the locks over db.
func NewHolds(db *gorm.DB) *Holds { return &Holds{db: db, held: map[string]bool{}} }

// holdBeat is how often a held PostgreSQL lock's transaction sends a statement, and
// holdIdle the idle_in_transaction_session_timeout it sets for itself in place of
// Options.IdleInTxTimeout: the beat keeps it open while its holder is alive, and a
// holder that hangs loses the lock within holdIdle.
const (
	holdBeat = time.Second
	holdIdle = 10 * time.Second
)

// TryHold takes the lock named by parts joined, if no one holds it, and returns the
// function that frees it (call it once, when the work is done); ok is false, and
// release nil, when another holder has it. On PostgreSQL the lock is
// pg_try_advisory_xact_lock, keyed like LockXact, in a transaction of its own held
// open on one connection until release (it works through a transaction pooler, and
// a process that dies frees it with its connection); on SQLite, one process per
// file, the process's own record is the lock. Errors: the store's.
func (h *Holds) TryHold(ctx context.Context, parts ...string) (release func(), ok bool, err error) {
	name := strings.Join(parts, "\x00")
	h.mu.Lock()
	if h.held[name] {
		h.mu.Unlock()
		return nil, false, nil
	}
	h.held[name] = true
	h.mu.Unlock()
	free := func() {
		h.mu.Lock()
		delete(h.held, name)
		h.mu.Unlock()
	}
	if h.db.Dialector.Name() != string(Postgres) {
		var once sync.Once
		return func() { once.Do(free) }, true, nil
	}
	stop, ok, err := h.holdAdvisory(ctx, name)
	if err != nil || !ok {
		free()
		return nil, ok, err
	}
	var once sync.Once
	return func() { once.Do(func() { stop(); free() }) }, true, nil
}

// holdAdvisory takes the advisory lock of name in a transaction of its own and
// keeps it open, beating, until stop.
func (h *Holds) holdAdvisory(ctx context.Context, name string) (stop func(), ok bool, err error) {
	sum := sha256.Sum256([]byte(name))
	id := int64(binary.BigEndian.Uint64(sum[:8]))
	// The lock outlives the request's statements' bounds: its transaction is
	// bounded by its holder, who ends it.
	tx := h.db.WithContext(context.WithoutCancel(ctx)).Begin()
	if tx.Error != nil {
		return nil, false, fmt.Errorf("hold %s: %w", name, tx.Error)
	}
	err = tx.Exec(fmt.Sprintf("SET LOCAL idle_in_transaction_session_timeout = %d", holdIdle.Milliseconds())).Error
	if err == nil {
		err = tx.Raw("SELECT pg_try_advisory_xact_lock(?)", id).Scan(&ok).Error
	}
	if err != nil || !ok {
		tx.Rollback()
		if err != nil {
			return nil, false, fmt.Errorf("hold %s: %w", name, err)
		}
		return nil, false, nil
	}
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(holdBeat)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				var one int
				if tx.Raw("SELECT 1").Scan(&one).Error != nil {
					return // the lock is gone with its connection
				}
			}
		}
	}()
	return func() {
		close(done)
		<-ended
		tx.Rollback()
	}, true, nil
}
