package idempotency

import (
	"context"
	"log/slog"
	"time"

	"github.com/riskapi/riskapi/internal/logfield"
	"github.com/riskapi/riskapi/internal/sweep"
)

// Sweeper deletes expired records in bounded batches. Expiry does not depend on it —
// lookups treat an expired record as absent — it only reclaims space. Sweep is safe
// to run on every instance at once (the Store's DeleteExpired contract).
type Sweeper struct {
	// Store holds the records. Required.
	Store Store
	// Pacing bounds each delete and the breather between them, so writes keep their
	// latency while a backlog is swept (SQLite's one writer needs it; see
	// docs/performance.md). Optional. Default: batches of 1000, no pause.
	Pacing sweep.Pacing
	// Now is the clock. Optional. Default time.Now.
	Now func() time.Time
	// Metrics, Logger: optional.
	Metrics *Metrics
	Logger  *slog.Logger
}

// Sweep deletes every record expired at the start of the call, one batch at a time,
// and returns how many it deleted. It stops early when ctx is done, returning the
// count so far and ctx's error.
func (s *Sweeper) Sweep(ctx context.Context) (int, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	start := time.Now()
	cutoff := now()
	total, err := sweep.Batches(ctx, s.Pacing, func(ctx context.Context, limit int) (int, error) {
		return s.Store.DeleteExpired(ctx, cutoff, limit)
	})
	s.Metrics.swept(total, time.Since(start))
	if err != nil {
		return total, err
	}
	if s.Logger != nil {
		s.Logger.Info("idempotency sweep", slog.Int("deleted", total), logfield.Duration(time.Since(start)))
	}
	return total, nil
}
