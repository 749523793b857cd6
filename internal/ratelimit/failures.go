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
// count their failures here: attempts that succeed cost nothing, so an office
// behind one address is not throttled by its own sign-ins (internal/server).
type Failures interface {
	// Failures returns key's failures in its open window and how long the window
	// has left (0, 0 when none is open).
	Failures(ctx context.Context, key string) (int, time.Duration, error)
	// Fail counts one failure for key, opening a window of length window when none
	// is open.
	Fail(ctx context.Context, key string, window time.Duration) error
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
func (m *MemoryFailures) Fail(_ context.Context, key string, d time.Duration) error {
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
	return nil
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

// Fail implements Failures: SET NX opens the window with its expiry, INCR counts
// (and keeps the expiry). Errors: as Failures.
func (r *Redis) Fail(ctx context.Context, key string, d time.Duration) error {
	k := r.prefix + "failures:" + key
	pipe := r.client.TxPipeline()
	pipe.SetNX(ctx, k, 0, d)
	pipe.Incr(ctx, k)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("ratelimit: count failure of %s: %w", key, err)
	}
	return nil
}

// Recent is a Failures over a shared one (Redis) that answers Failures from a copy
// of a key's count read at most fresh ago, so a check made on every request (the
// authentication throttle, internal/server) costs a round trip per key per fresh,
// not one per request. A key's own instance sees its failures at once: Fail drops
// the key's copy, so the next check reads the shared count again. Other instances'
// failures reach it within fresh, so across n instances a key may go over its limit
// by what the other instances let fail in the last fresh before they saw it. Read
// errors are returned and never kept. Copies older than fresh are dropped when a
// new one is kept, at most once per fresh.
type Recent struct {
	shared Failures
	fresh  time.Duration
	now    func() time.Time

	mu     sync.Mutex
	copies map[string]copied
	swept  time.Time
	fails  uint64 // Fail calls so far: a read that overlapped one is not kept
}

// copied is one key's count as read from the shared store at read, its window
// ending at ends (zero when none was open).
type copied struct {
	n          int
	ends, read time.Time
}

// NewRecent returns a Recent over shared whose copies are kept for fresh.
func NewRecent(shared Failures, fresh time.Duration) *Recent {
	return &Recent{shared: shared, fresh: fresh, now: time.Now, copies: map[string]copied{}}
}

// Failures implements Failures from a copy at most fresh old, or from the shared
// store. Errors: the shared store's.
func (r *Recent) Failures(ctx context.Context, key string) (int, time.Duration, error) {
	now := r.now()
	r.mu.Lock()
	c, ok := r.copies[key]
	fails := r.fails
	r.mu.Unlock()
	if ok && now.Sub(c.read) < r.fresh {
		if c.n == 0 || !now.Before(c.ends) {
			return 0, 0, nil
		}
		return c.n, c.ends.Sub(now), nil
	}
	n, left, err := r.shared.Failures(ctx, key)
	if err != nil {
		return 0, 0, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fails != fails { // it may have missed that failure
		return n, left, nil
	}
	if now.Sub(r.swept) >= r.fresh {
		for k, c := range r.copies {
			if now.Sub(c.read) >= r.fresh {
				delete(r.copies, k)
			}
		}
		r.swept = now
	}
	r.copies[key] = copied{n: n, ends: now.Add(left), read: now}
	return n, left, nil
}

// Fail implements Failures: counts in the shared store and drops key's copy.
// Errors: the shared store's.
func (r *Recent) Fail(ctx context.Context, key string, window time.Duration) error {
	err := r.shared.Fail(ctx, key, window)
	r.mu.Lock()
	delete(r.copies, key)
	r.fails++
	r.mu.Unlock()
	return err
}
