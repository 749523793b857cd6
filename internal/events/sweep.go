package events

import (
	"context"
	"log/slog"
	"time"
)

// DefaultTTL is how long events are kept and listable (EVENT_TTL).
const DefaultTTL = 720 * time.Hour

// Sweeper deletes events older than TTL, with their deliveries and delivery log, in
// bounded batches. It is safe to run on every instance at once: each batch is one
// transaction deleting rows by ID, and a row deleted twice is simply not found.
type Sweeper struct {
	Store Store
	// TTL is how long an event is kept. Optional. Default DefaultTTL.
	TTL time.Duration
	// Batch bounds each transaction. Optional. Default 1000.
	Batch int
	// Pause between batches lets writers in (SQLite has one writer). Optional.
	Pause time.Duration
	// Now is the clock. Optional. Default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Sweep deletes every event older than TTL and returns how many it deleted.
func (s *Sweeper) Sweep(ctx context.Context) (int, error) {
	ttl, batch, now := s.TTL, s.Batch, time.Now
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if batch <= 0 {
		batch = 1000
	}
	if s.Now != nil {
		now = s.Now
	}
	cutoff := now().Add(-ttl)
	total := 0
	for {
		n, err := s.Store.DeleteCreatedBefore(ctx, cutoff, batch)
		total += n
		if err != nil || n < batch {
			if s.Logger != nil && total > 0 {
				s.Logger.Info("event sweep", slog.Int("deleted", total))
			}
			return total, err
		}
		if s.Pause > 0 {
			select {
			case <-ctx.Done():
				return total, ctx.Err()
			case <-time.After(s.Pause):
			}
		}
	}
}
