package ratelimit

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Memory is a Store in this process's memory: each instance counts alone. Buckets
// that have filled up again are dropped (a full bucket and no bucket are the same),
// at most once a minute, so memory follows the keys active in the last window.
type Memory struct {
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
	swept   time.Time
	now     func() time.Time
}

// NewMemory returns an empty Memory store.
func NewMemory() *Memory {
	return &Memory{buckets: map[string]*rate.Limiter{}, now: time.Now}
}

// sweepEvery is how often Allow drops full buckets.
const sweepEvery = time.Minute

// Allow implements Store; it never fails.
func (m *Memory) Allow(_ context.Context, key string, l Limit) (Result, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if now.Sub(m.swept) >= sweepEvery {
		for k, b := range m.buckets {
			if b.TokensAt(now) >= float64(b.Burst()) {
				delete(m.buckets, k)
			}
		}
		m.swept = now
	}
	b, ok := m.buckets[key]
	if !ok {
		b = rate.NewLimiter(rate.Limit(l.RPS), l.Burst)
		m.buckets[key] = b
	}
	allowed := b.AllowN(now, 1)
	tokens := b.TokensAt(now)
	res := Result{Allowed: allowed, Remaining: max(0, int(math.Floor(tokens))),
		ResetAfter: seconds((float64(l.Burst) - tokens) / l.RPS)}
	if !allowed {
		res.RetryAfter = seconds((1 - tokens) / l.RPS)
	}
	return res, nil
}

func seconds(s float64) time.Duration {
	return time.Duration(max(0, s) * float64(time.Second))
}
