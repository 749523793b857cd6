package sweep_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/sweep"
)

// TestBatches: batches run until one comes back short, every batch bounded; an error
// or a cancelled pause stops the loop with the count so far.
func TestBatches(t *testing.T) {
	t.Parallel()
	left := 2500
	var limits []int
	n, err := sweep.Batches(context.Background(), 1000, time.Millisecond, func(_ context.Context, limit int) (int, error) {
		limits = append(limits, limit)
		d := min(limit, left)
		left -= d
		return d, nil
	})
	if err != nil || n != 2500 || len(limits) != 3 || limits[0] != 1000 {
		t.Errorf("deleted %d in batches %v (%v), want 2500 in 3 of 1000", n, limits, err)
	}

	boom := errors.New("boom")
	n, err = sweep.Batches(context.Background(), 10, 0, func(context.Context, int) (int, error) { return 4, boom })
	if n != 4 || !errors.Is(err, boom) {
		t.Errorf("on error: %d, %v", n, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	n, err = sweep.Batches(ctx, 10, time.Hour, func(context.Context, int) (int, error) {
		calls++
		cancel()
		return 10, nil
	})
	if n != 10 || calls != 1 || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled during the pause: %d after %d calls, %v", n, calls, err)
	}
}
