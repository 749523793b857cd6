package server

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/route"
)

// InflightConfig configures the limit of requests in flight per key (Stripe's
// concurrent-requests limiter): a request that would make its key's count exceed
// Max is refused at once with 429 CONCURRENCY_LIMITED and Retry-After, never
// queued; the count drops when the request ends, however it ends. riskapi limits a
// tenant's costly reads (route.Route.Costly, TENANT_MAX_INFLIGHT): what one tenant
// runs at once cannot take the instance's store from the others.
type InflightConfig struct {
	// Skipper leaves a request uncounted and unlimited when it returns true.
	// Optional. Default: every request is counted.
	Skipper middleware.Skipper
	// Max is how many requests of one key may be in flight at once. Required (> 0).
	Max int
	// Key is what a request is counted under; an error is returned as the request's
	// (401 when it has no tenant). Optional. Default route.Tenant.
	Key func(c echo.Context) (string, error)
	// Slots keeps the counts; routes that share it share their keys' limits.
	// Optional. Default: a new Slots of Max per key.
	Slots *Slots
	// Wait bounds how long a request waits for its turn to run when Slots bounds
	// the requests running at once (NewFairSlots); past it the request is refused
	// as one beyond the key's share. Optional. Default 10s (QUERY_TIMEOUT's).
	Wait time.Duration
	// RetryAfter is the 429's Retry-After. Optional. Default 1s: a costly read
	// lasts a fraction of a second to a few seconds.
	RetryAfter time.Duration
}

// ToMiddleware returns the limiter. Errors: Max is not positive.
func (cfg InflightConfig) ToMiddleware() (echo.MiddlewareFunc, error) {
	if cfg.Max <= 0 && cfg.Slots == nil {
		return nil, errors.New("inflight limit: Max must be positive")
	}
	if cfg.Skipper == nil {
		cfg.Skipper = middleware.DefaultSkipper
	}
	if cfg.Key == nil {
		cfg.Key = route.Tenant
	}
	if cfg.Slots == nil {
		cfg.Slots = NewSlots(cfg.Max)
	}
	if cfg.Wait <= 0 {
		cfg.Wait = 10 * time.Second
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = time.Second
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if cfg.Skipper(c) {
				return next(c)
			}
			key, err := cfg.Key(c)
			if err != nil {
				return err
			}
			ctx := c.Request().Context()
			wait, cancel := context.WithTimeout(ctx, cfg.Wait)
			ok, err := cfg.Slots.Enter(wait, key)
			cancel()
			if err != nil && ctx.Err() != nil {
				return ctx.Err() // the client hung up while waiting
			}
			if err != nil {
				return &problem.Problem{Code: problem.ConcurrencyLimited, RetryAfter: cfg.RetryAfter,
					Detail: "this instance's costly reads (searches, unindexed filters, exports) were all busy for as long as a read may take; retry after Retry-After"}
			}
			if !ok {
				return &problem.Problem{Code: problem.ConcurrencyLimited, RetryAfter: cfg.RetryAfter,
					Detail: "too many of this tenant's costly reads (searches, unindexed filters, exports) are in flight; retry after Retry-After or run fewer at once"}
			}
			defer cfg.Slots.Give(key)
			return next(c)
		}
	}, nil
}

// Slots counts requests in flight per key, up to a maximum per key, on this
// instance, and optionally bounds how many of all keys' requests run at once
// (NewFairSlots): beyond that bound a request waits its turn, and turns go to the
// key with the fewest running, so one key's many requests cannot keep another's
// waiting. Safe for concurrent use. A key's entries are removed when its counts are
// back to zero, so it holds only the keys with requests in flight.
type Slots struct {
	max int
	// running bounds the requests of all keys running at once; 0: no bound.
	running int
	mu      sync.Mutex
	n       map[string]int // admitted (running or waiting) per key
	active  map[string]int // running per key
	total   int            // running, all keys
	queue   []*waiter      // waiting, in arrival order
}

// waiter is one request waiting for a running slot; ready is closed when it has one.
type waiter struct {
	key   string
	ready chan struct{}
	given bool
}

// NewSlots returns slots of max per key, all running at once.
func NewSlots(max int) *Slots { return NewFairSlots(max, 0) }

// NewFairSlots returns slots of max per key of which at most running (0: no bound)
// run at once on the instance, shared between keys as Slots says.
func NewFairSlots(max, running int) *Slots {
	return &Slots{max: max, running: running, n: map[string]int{}, active: map[string]int{}}
}

// Give ends one request of key that Enter let run.
func (s *Slots) Give(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop(s.active, key)
	s.drop(s.n, key)
	s.total--
	s.next()
}

// Enter admits one more request of key as Take does (false when key has max in
// flight), then waits until it may run: at once while fewer than the bound run,
// else until a running request ends and key is the waiting key with the fewest
// running (the longest-waiting of its requests first). Once it returns true the
// caller must call Give. Errors: ctx's, when it ends before the request's turn
// (nothing is then counted).
func (s *Slots) Enter(ctx context.Context, key string) (bool, error) {
	s.mu.Lock()
	if s.n[key] >= s.max {
		s.mu.Unlock()
		return false, nil
	}
	s.n[key]++
	if s.running <= 0 || s.total < s.running {
		s.active[key]++
		s.total++
		s.mu.Unlock()
		return true, nil
	}
	t := &waiter{key: key, ready: make(chan struct{})}
	s.queue = append(s.queue, t)
	s.mu.Unlock()
	select {
	case <-t.ready:
		return true, nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.given {
		// Its turn came as ctx ended: hand the turn on.
		s.drop(s.active, key)
		s.total--
		s.next()
	} else {
		s.queue = slices.DeleteFunc(s.queue, func(w *waiter) bool { return w == t })
	}
	s.drop(s.n, key)
	return false, ctx.Err()
}

// next gives free running slots to waiting requests, each to the waiting key with
// the fewest running, oldest first among equals. s.mu is held.
func (s *Slots) next() {
	for len(s.queue) > 0 && (s.running <= 0 || s.total < s.running) {
		pick := 0
		for i, w := range s.queue {
			if s.active[w.key] < s.active[s.queue[pick].key] {
				pick = i
			}
		}
		t := s.queue[pick]
		s.queue = slices.Delete(s.queue, pick, pick+1)
		t.given = true
		s.active[t.key]++
		s.total++
		close(t.ready)
	}
}

// drop counts one fewer of key in m, removing key at zero.
func (s *Slots) drop(m map[string]int, key string) {
	if m[key] <= 1 {
		delete(m, key)
		return
	}
	m[key]--
}

// costlyReads is the middleware of a route with route.Route.Costly: its costly
// requests take one of the tenant's slots.
func costlyReads(slots *Slots, wait time.Duration, costly func(echo.Context) bool) (echo.MiddlewareFunc, error) {
	return InflightConfig{Slots: slots, Wait: wait, Skipper: func(c echo.Context) bool { return !costly(c) }}.ToMiddleware()
}
