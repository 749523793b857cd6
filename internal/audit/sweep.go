package audit

import (
	"context"
	"log/slog"
	"time"

	"github.com/riskapi/riskapi/internal/sweep"
)

// DefaultTTL is how long entries are kept (AUDIT_LOG_TTL).
const DefaultTTL = 8760 * time.Hour

// Sweeper deletes entries older than TTL in bounded batches (internal/sweep): the
// only way an entry ever leaves the log. Safe on every instance at once: a row
// deleted twice is simply not found.
type Sweeper struct {
	Store Store
	// TTL is how long an entry is kept. Optional. Default DefaultTTL.
	TTL time.Duration
	// Pacing bounds each batch and the breather between them. Optional.
	Pacing sweep.Pacing
	// Now is the clock. Optional. Default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Sweep deletes every entry older than TTL and returns how many it deleted. It stops
// early when ctx is done, returning the count so far and ctx's error.
func (s *Sweeper) Sweep(ctx context.Context) (int, error) {
	ttl, now := s.TTL, time.Now
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if s.Now != nil {
		now = s.Now
	}
	cutoff := now().Add(-ttl)
	total, err := sweep.Batches(ctx, s.Pacing, func(ctx context.Context, limit int) (int, error) {
		return s.Store.DeleteBefore(ctx, cutoff, limit)
	})
	if s.Logger != nil && total > 0 {
		s.Logger.Info("audit log sweep", slog.Int("deleted", total))
	}
	return total, err
}
