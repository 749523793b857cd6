package requestlog

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/riskapi/riskapi/internal/sweep"
)

// Sweeper deletes entries older than TTL in bounded batches (internal/sweep), like
// the idempotency sweep. Safe to run on every instance at once.
type Sweeper struct {
	// Store holds the entries. Required.
	Store Store
	// TTL is how long entries are kept (REQUEST_LOG_TTL). Required.
	TTL time.Duration
	// Pacing bounds each delete and the breather between them (SQLite's one writer
	// needs it; see docs/performance.md). Optional. Default: batches of 1000, no
	// pause.
	Pacing sweep.Pacing
	// Now is the clock. Optional. Default time.Now.
	Now func() time.Time
	// Logger: optional.
	Logger *slog.Logger
}

// Sweep deletes every entry older than TTL at the start of the call and returns how
// many it deleted. It stops early when ctx is done, returning the count so far and
// ctx's error. Errors: a TTL that is not positive (nothing is deleted).
func (s *Sweeper) Sweep(ctx context.Context) (int, error) {
	if s.TTL <= 0 {
		return 0, errors.New("requestlog: Sweeper.TTL must be positive")
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	start := time.Now()
	cutoff := now().Add(-s.TTL)
	total, err := sweep.Batches(ctx, s.Pacing, func(ctx context.Context, limit int) (int, error) {
		return s.Store.DeleteBefore(ctx, cutoff, limit)
	})
	if err != nil {
		return total, err
	}
	if s.Logger != nil {
		s.Logger.Info("request log sweep", slog.Int("deleted", total), slog.Duration("took", time.Since(start)))
	}
	return total, nil
}
