package audit

import (
	"context"
	"log/slog"
	"time"

	"github.com/riskapi/riskapi/internal/sweep"
)

// Sweeper deletes entries older than TTL in bounded batches (internal/sweep): the
// only way an entry ever leaves the log. Safe on every instance at once: a row
// deleted twice is simply not found.
type Sweeper struct {
	Store Store
	// TTL is how long an entry is kept (AUDIT_LOG_TTL). Required.
	TTL time.Duration
	// Pacing bounds each batch and the breather between them. Optional.
	Pacing sweep.Pacing
	// Now is the clock. Optional. Default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Sweep deletes every entry older than TTL and returns how many it deleted. It stops
// early when ctx is done, returning the count so far and ctx's error. Errors: a TTL
// that is not positive (nothing is deleted); the store's.
func (s *Sweeper) Sweep(ctx context.Context) (int, error) {
	return sweep.ByAge{Name: "audit log sweep", DeleteBefore: s.Store.DeleteBefore, TTL: s.TTL,
		Pacing: s.Pacing, Now: s.Now, Logger: s.Logger}.Sweep(ctx)
}
