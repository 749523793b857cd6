package sweep

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/riskapi/riskapi/internal/logfield"
)

// ByAge is a retention sweep: it deletes, in Batches, whatever was created more
// than TTL before the sweep began. The event and request-log sweeps are ByAge over
// their stores.
type ByAge struct {
	// Name names the sweep in its log line and errors ("event sweep"). Required.
	Name string
	// DeleteBefore deletes up to limit rows created before cutoff and returns how
	// many it deleted. Required.
	DeleteBefore func(ctx context.Context, cutoff time.Time, limit int) (int, error)
	// TTL is how long a row is kept. Required.
	TTL time.Duration
	// Pacing bounds each batch and the breather between them (SQLite's one writer
	// needs it; see docs/performance.md). Optional. Default: batches of
	// DefaultBatchSize, no pause.
	Pacing Pacing
	// Now is the clock. Optional. Default time.Now.
	Now func() time.Time
	// Logger logs each sweep that deleted something. Optional.
	Logger *slog.Logger
}

// Sweep deletes every row older than TTL at the start of the call and returns how
// many it deleted. It stops early when ctx is done, returning the count so far and
// ctx's error. Errors: a TTL that is not positive (nothing is deleted); the store's.
func (s ByAge) Sweep(ctx context.Context) (int, error) {
	if s.TTL <= 0 {
		return 0, errors.New(s.Name + ": TTL must be positive")
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	start := time.Now()
	cutoff := now().Add(-s.TTL)
	total, err := Batches(ctx, s.Pacing, func(ctx context.Context, limit int) (int, error) {
		return s.DeleteBefore(ctx, cutoff, limit)
	})
	if s.Logger != nil && total > 0 {
		s.Logger.Info(s.Name, slog.Int("deleted", total), logfield.Duration(time.Since(start)))
	}
	return total, err
}
