package sweep_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
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
	n, err := sweep.Batches(context.Background(), sweep.Pacing{Size: 1000, Pause: time.Millisecond}, func(_ context.Context, limit int) (int, error) {
		limits = append(limits, limit)
		d := min(limit, left)
		left -= d
		return d, nil
	})
	if err != nil || n != 2500 || len(limits) != 3 || limits[0] != 1000 {
		t.Errorf("deleted %d in batches %v (%v), want 2500 in 3 of 1000", n, limits, err)
	}

	boom := errors.New("boom")
	n, err = sweep.Batches(context.Background(), sweep.Pacing{Size: 10}, func(context.Context, int) (int, error) { return 4, boom })
	if n != 4 || !errors.Is(err, boom) {
		t.Errorf("on error: %d, %v", n, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	n, err = sweep.Batches(ctx, sweep.Pacing{Size: 10, Pause: time.Hour}, func(context.Context, int) (int, error) {
		calls++
		cancel()
		return 10, nil
	})
	if n != 10 || calls != 1 || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled during the pause: %d after %d calls, %v", n, calls, err)
	}
}

// TestRestScalesThePause: with Rest, a slow batch is followed by a pause at least
// Rest times as long.
func TestRestScalesThePause(t *testing.T) {
	t.Parallel()
	var ends, starts []time.Time
	calls := 0
	_, err := sweep.Batches(context.Background(), sweep.Pacing{Size: 1, Rest: 2}, func(context.Context, int) (int, error) {
		starts = append(starts, time.Now())
		calls++
		time.Sleep(20 * time.Millisecond)
		ends = append(ends, time.Now())
		if calls == 3 {
			return 0, nil
		}
		return 1, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(ends[i-1]); gap < 40*time.Millisecond {
			t.Errorf("pause %d was %s, want at least twice the 20ms batch", i, gap)
		}
	}
}

// TestByAgeDeletesWhatIsOlderThanTTL: a retention sweep asks its store for the rows
// created before now minus TTL, and refuses to run without a TTL rather than
// delete everything.
func TestByAgeDeletesWhatIsOlderThanTTL(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)
	var cutoffs []time.Time
	s := sweep.ByAge{Name: "test sweep", TTL: time.Hour, Now: func() time.Time { return now },
		Pacing: sweep.Pacing{Size: 2},
		DeleteBefore: func(_ context.Context, cutoff time.Time, limit int) (int, error) {
			cutoffs = append(cutoffs, cutoff)
			return min(limit, 3-len(cutoffs)), nil // 2, then 1: the second batch is short
		}}
	n, err := s.Sweep(context.Background())
	if err != nil || n != 3 {
		t.Fatalf("Sweep = %d, %v; want 3 rows", n, err)
	}
	for _, c := range cutoffs {
		if !c.Equal(now.Add(-time.Hour)) {
			t.Errorf("cutoff %v, want %v", c, now.Add(-time.Hour))
		}
	}
	s.TTL = 0
	if n, err := s.Sweep(context.Background()); err == nil || n != 0 {
		t.Errorf("without a TTL: Sweep = %d, %v; want an error and nothing deleted", n, err)
	}
}

// TestBatchedRunsUntilShort: a sweep not by age runs its batch until one comes back
// short and returns the total; without a batch it refuses to run.
func TestBatchedRunsUntilShort(t *testing.T) {
	t.Parallel()
	left := 25
	s := sweep.Batched{Name: "fold", Pacing: sweep.Pacing{Size: 10}, Batch: func(_ context.Context, limit int) (int, error) {
		d := min(limit, left)
		left -= d
		return d, nil
	}}
	if n, err := s.Sweep(context.Background()); err != nil || n != 25 || left != 0 {
		t.Errorf("Sweep = %d, %v with %d left; want 25 and none left", n, err, left)
	}
	if n, err := (sweep.Batched{Name: "fold"}).Sweep(context.Background()); err == nil || n != 0 {
		t.Errorf("without a batch: Sweep = %d, %v; want an error", n, err)
	}
}

// TestSweepLogsMilliseconds: a sweep's log line says how long it took as the request
// line does, durationMs in milliseconds, not slog's bare nanoseconds under "took".
func TestSweepLogsMilliseconds(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	calls := 0
	s := sweep.ByAge{Name: "test sweep", TTL: time.Hour, Logger: slog.New(slog.NewJSONHandler(&buf, nil)),
		DeleteBefore: func(context.Context, time.Time, int) (int, error) {
			calls++
			if calls > 1 {
				return 0, nil
			}
			time.Sleep(5 * time.Millisecond)
			return 1, nil
		}}
	if _, err := s.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("log %q: %v", buf.String(), err)
	}
	// At least the 5 ms slept, and not nanoseconds (which would be over 5,000,000).
	if ms, ok := line["durationMs"].(float64); !ok || ms < 5 || ms > 60_000 {
		t.Errorf("durationMs = %v in %v, want the milliseconds the sweep took", line["durationMs"], line)
	}
	if _, ok := line["took"]; ok {
		t.Errorf("the line still has took: %v", line)
	}
}
