// Package ratelimit counts requests per key against a rate and a burst (GCRA, the
// generic cell rate algorithm, which is a token bucket seen from its clock), either
// in this process (Memory, golang.org/x/time/rate) or shared by every process through
// Redis (Redis, github.com/go-redis/redis_rate). It knows nothing of HTTP or
// credentials: internal/server decides what a key is, what a refusal looks like and
// what happens when the store fails.
package ratelimit

import (
	"context"
	"math"
	"time"
)

// Limit is RPS requests per second sustained, with up to Burst at once.
type Limit struct {
	RPS   float64 // > 0
	Burst int     // ≥ 1
}

// Window is how long an empty bucket takes to fill: Burst requests per Window is the
// quota a client can plan with (the "w" of the IETF RateLimit-Policy field).
func (l Limit) Window() time.Duration {
	return time.Duration(math.Ceil(float64(l.Burst) / l.RPS * float64(time.Second)))
}

// Result is one request's verdict and the bucket's state after it.
type Result struct {
	Allowed bool
	// Remaining is how many more requests would be allowed right now.
	Remaining int
	// RetryAfter is how long until a request would be allowed; 0 when Allowed.
	RetryAfter time.Duration
	// ResetAfter is how long until the bucket is full again.
	ResetAfter time.Duration
}

// Store counts one request for key against l. Keys of different limits must not
// collide: callers prefix them with the limit's name. An error means the count could
// not be taken (the store is unreachable); the caller decides what to do.
type Store interface {
	Allow(ctx context.Context, key string, l Limit) (Result, error)
}
