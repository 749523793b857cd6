// Package sweep is the one loop every retention sweep runs (idempotency records,
// request-log entries): delete a bounded batch, breathe, repeat until a batch comes
// back short. Each batch is one short statement, so writers keep their latency while
// a large backlog is deleted. It knows nothing of what it deletes.
package sweep

import (
	"context"
	"time"
)

// DefaultBatchSize is the batch size when none is given.
const DefaultBatchSize = 1000

// Pacing bounds how hard a sweep presses on the database.
type Pacing struct {
	// Size bounds each batch. Optional. Default DefaultBatchSize.
	Size int
	// Pause is slept between batches. Optional. Default 0.
	Pause time.Duration
	// Rest, when positive, makes each pause at least Rest times as long as the batch
	// before it took, so the sweep holds a single-writer database (SQLite) at most
	// 1/(1+Rest) of the time however slow its batches get. Optional. Default 0.
	Rest float64
}

// Batches calls deleteBatch with limit p.Size until a call deletes fewer than limit
// rows, pausing between calls as p says, and returns how many rows were deleted in
// all. It stops at deleteBatch's first error, or when ctx ends during a pause,
// returning the count so far with that error.
func Batches(ctx context.Context, p Pacing, deleteBatch func(ctx context.Context, limit int) (int, error)) (int, error) {
	size := p.Size
	if size <= 0 {
		size = DefaultBatchSize
	}
	total := 0
	for {
		start := time.Now()
		n, err := deleteBatch(ctx, size)
		total += n
		if err != nil || n < size {
			return total, err
		}
		pause := max(p.Pause, time.Duration(p.Rest*float64(time.Since(start))))
		if pause > 0 {
			t := time.NewTimer(pause)
			select {
			case <-ctx.Done():
				t.Stop()
				return total, ctx.Err()
			case <-t.C:
			}
		}
	}
}
