package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Failures counts failures per key in fixed windows: the first failure of a key
// opens a window of the given length, and the count ends with it. Password checks
// and failed authentications count their failures here: attempts that succeed cost
// nothing, so an office behind one address is not throttled by its own sign-ins
// (internal/server).
type Failures interface {
	// Failures returns key's failures in its open window and how long the window
	// has left (0, 0 when none is open).
	Failures(ctx context.Context, key string) (int, time.Duration, error)
	// Fail counts one failure for key, opening a window of length window when none
	// is open, and returns key's failures in its window, this one included, and
	// how long the window has left.
	Fail(ctx context.Context, key string, window time.Duration) (int, time.Duration, error)
}

// window is one key's open window in memory.
type window struct {
	n    int
	ends time.Time
}

// MemoryFailures is Failures in this process's memory. Ended windows are dropped
// at most once a minute.
type MemoryFailures struct {
	mu      sync.Mutex
	windows map[string]window
	swept   time.Time
	now     func() time.Time
}

// NewMemoryFailures returns an empty MemoryFailures.
func NewMemoryFailures() *MemoryFailures {
	return &MemoryFailures{windows: map[string]window{}, now: time.Now}
}

// Failures implements Failures; it never fails.
func (m *MemoryFailures) Failures(_ context.Context, key string) (int, time.Duration, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	w, ok := m.windows[key]
	if !ok || !now.Before(w.ends) {
		return 0, 0, nil
	}
	return w.n, w.ends.Sub(now), nil
}

// Fail implements Failures; it never fails.
func (m *MemoryFailures) Fail(_ context.Context, key string, d time.Duration) (int, time.Duration, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if now.Sub(m.swept) >= sweepEvery {
		for k, w := range m.windows {
			if !now.Before(w.ends) {
				delete(m.windows, k)
			}
		}
		m.swept = now
	}
	w, ok := m.windows[key]
	if !ok || !now.Before(w.ends) {
		w = window{ends: now.Add(d)}
	}
	w.n++
	m.windows[key] = w
	return w.n, w.ends.Sub(now), nil
}

// Failures implements Failures for every instance sharing Redis: the count is a
// key that expires with its window. Errors: Redis could not be reached, or ctx ended.
func (r *Redis) Failures(ctx context.Context, key string) (int, time.Duration, error) {
	k := r.prefix + "failures:" + key
	pipe := r.client.Pipeline()
	get := pipe.Get(ctx, k)
	ttl := pipe.PTTL(ctx, k)
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return 0, 0, fmt.Errorf("ratelimit: failures of %s: %w", key, err)
	}
	n, err := get.Int()
	if err == redis.Nil {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("ratelimit: failures of %s: %w", key, err)
	}
	return n, max(0, ttl.Val()), nil
}

// Fail implements Failures in one round trip: SET NX opens the window with its
// expiry, INCR counts (and keeps the expiry), PTTL reads what is left. Errors: as
// Failures.
func (r *Redis) Fail(ctx context.Context, key string, d time.Duration) (int, time.Duration, error) {
	k := r.prefix + "failures:" + key
	pipe := r.client.TxPipeline()
	pipe.SetNX(ctx, k, 0, d)
	n := pipe.Incr(ctx, k)
	ttl := pipe.PTTL(ctx, k)
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, 0, fmt.Errorf("ratelimit: count failure of %s: %w", key, err)
	}
	return int(n.Val()), max(0, ttl.Val()), nil
}
