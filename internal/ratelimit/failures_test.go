package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/ratelimit"
)

// TestFailuresCountInWindows: failures count per key within the window the first
// one opened, and Failures reports how long it has left; both stores agree (Redis
// when one runs on 127.0.0.1:6379).
func TestFailuresCountInWindows(t *testing.T) {
	t.Parallel()
	all := map[string]ratelimit.Failures{"memory": ratelimit.NewMemoryFailures()}
	for name, s := range stores(t) {
		if f, ok := s.(ratelimit.Failures); ok {
			all[name] = f
		}
	}
	ctx := context.Background()
	for name, f := range all {
		t.Run(name, func(t *testing.T) {
			for i := range 3 {
				n, left, err := f.Fail(ctx, "a", time.Minute)
				if err != nil || n != i+1 || left <= 50*time.Second || left > time.Minute {
					t.Fatalf("failure %d: n=%d left=%s err=%v, want %d and about a minute", i+1, n, left, err, i+1)
				}
			}
			n, left, err := f.Failures(ctx, "a")
			if err != nil || n != 3 || left <= 50*time.Second || left > time.Minute {
				t.Errorf("after 3 failures: n=%d left=%s err=%v, want 3 and about a minute", n, left, err)
			}
			if n, left, err := f.Failures(ctx, "b"); n != 0 || left != 0 || err != nil {
				t.Errorf("a key without failures: n=%d left=%s err=%v", n, left, err)
			}
			if _, _, err := f.Fail(ctx, "short", 50*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			time.Sleep(120 * time.Millisecond)
			if n, _, _ := f.Failures(ctx, "short"); n != 0 {
				t.Errorf("a window that ended still counts %d", n)
			}
		})
	}
}
