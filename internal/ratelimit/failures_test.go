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
			for range 3 {
				if err := f.Fail(ctx, "a", time.Minute); err != nil {
					t.Fatal(err)
				}
			}
			n, left, err := f.Failures(ctx, "a")
			if err != nil || n != 3 || left <= 50*time.Second || left > time.Minute {
				t.Errorf("after 3 failures: n=%d left=%s err=%v, want 3 and about a minute", n, left, err)
			}
			if n, left, err := f.Failures(ctx, "b"); n != 0 || left != 0 || err != nil {
				t.Errorf("a key without failures: n=%d left=%s err=%v", n, left, err)
			}
			if err := f.Fail(ctx, "short", 50*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			time.Sleep(120 * time.Millisecond)
			if n, _, _ := f.Failures(ctx, "short"); n != 0 {
				t.Errorf("a window that ended still counts %d", n)
			}
		})
	}
}

// TestRecentFailuresShared: two instances sharing Redis, each checking through a
// Recent copy (as the authentication throttle does). An instance counts its own
// failures at once, even with a copy read just before; the other, which read the
// key before those failures, counts them once its copy is older than fresh.
func TestRecentFailuresShared(t *testing.T) {
	t.Parallel()
	insts := instances(t, 2)
	const fresh = 100 * time.Millisecond
	a, b := ratelimit.NewRecent(insts[0], fresh), ratelimit.NewRecent(insts[1], fresh)
	ctx := context.Background()
	for name, r := range map[string]*ratelimit.Recent{"a": a, "b": b} {
		if n, left, err := r.Failures(ctx, "net"); n != 0 || left != 0 || err != nil {
			t.Fatalf("%s before any failure: n=%d left=%s err=%v", name, n, left, err)
		}
	}
	for range 3 {
		if err := a.Fail(ctx, "net", time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if n, left, err := a.Failures(ctx, "net"); n != 3 || left <= 50*time.Second || err != nil {
		t.Errorf("a, right after its own 3 failures: n=%d left=%s err=%v, want 3 and about a minute", n, left, err)
	}
	time.Sleep(fresh + 20*time.Millisecond)
	if n, left, err := b.Failures(ctx, "net"); n != 3 || left <= 50*time.Second || err != nil {
		t.Errorf("b, a copy's age after a's failures: n=%d left=%s err=%v, want 3", n, left, err)
	}
}
