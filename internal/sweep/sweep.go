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

// Batches calls deleteBatch with limit size (DefaultBatchSize when size ≤ 0) until a
// call deletes fewer than limit rows, sleeping pause between calls, and returns how
// many rows were deleted in all. It stops at deleteBatch's first error, or when ctx
// ends during a pause, returning the count so far with that error.
func Batches(ctx context.Context, size int, pause time.Duration, deleteBatch func(ctx context.Context, limit int) (int, error)) (int, error) {
	if size <= 0 {
		size = DefaultBatchSize
	}
	total := 0
	for {
		n, err := deleteBatch(ctx, size)
		total += n
		if err != nil || n < size {
			return total, err
		}
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
