package events

import (
	"context"
	"log/slog"
	"time"

	"github.com/riskapi/riskapi/internal/sweep"
)

// Sweeper deletes events older than TTL, with their deliveries and delivery log, in
// bounded batches (internal/sweep). It is safe to run on every instance at once: each
// batch is one transaction deleting rows by ID, and a row deleted twice is simply not
// found.
type Sweeper struct {
	Store Store
	// TTL is how long an event is kept (EVENT_TTL). Required.
	TTL time.Duration
	// Pacing bounds each transaction and the breather between them (SQLite's one
	// writer needs it). Optional. Default: batches of 1000, no pause.
	Pacing sweep.Pacing
	// Now is the clock. Optional. Default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Sweep deletes every event older than TTL and returns how many it deleted. It stops
// early when ctx is done, returning the count so far and ctx's error. Errors: a TTL
// that is not positive (nothing is deleted).
func (s *Sweeper) Sweep(ctx context.Context) (int, error) {
	return sweep.ByAge{Name: "event sweep", DeleteBefore: s.Store.DeleteCreatedBefore, TTL: s.TTL,
		Pacing: s.Pacing, Now: s.Now, Logger: s.Logger}.Sweep(ctx)
}
