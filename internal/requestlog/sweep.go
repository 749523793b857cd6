package requestlog

import (
	"context"
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
	return sweep.ByAge{Name: "request log sweep", DeleteBefore: s.Store.DeleteBefore, TTL: s.TTL,
		Pacing: s.Pacing, Now: s.Now, Logger: s.Logger}.Sweep(ctx)
}
