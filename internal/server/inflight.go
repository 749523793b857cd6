package server

import (
	"errors"
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
			if !cfg.Slots.Take(key) {
				return &problem.Problem{Code: problem.ConcurrencyLimited, RetryAfter: cfg.RetryAfter,
					Detail: "too many of this tenant's costly reads (searches, unindexed filters, exports) are in flight; retry after Retry-After or run fewer at once"}
			}
			defer cfg.Slots.Give(key)
			return next(c)
		}
	}, nil
}

// Slots counts requests in flight per key, up to a maximum per key, on this
// instance. Safe for concurrent use. A key's entry is removed when its count is
// back to zero, so it holds only the keys with requests in flight.
type Slots struct {
	max int
	mu  sync.Mutex
	n   map[string]int
}

// NewSlots returns slots of max per key.
func NewSlots(max int) *Slots { return &Slots{max: max, n: map[string]int{}} }

// Take counts one more request of key and reports true, or reports false and
// counts nothing when key already has max in flight.
func (s *Slots) Take(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n[key] >= s.max {
		return false
	}
	s.n[key]++
	return true
}

// Give ends one request of key that Take counted.
func (s *Slots) Give(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n[key] <= 1 {
		delete(s.n, key)
		return
	}
	s.n[key]--
}

// costlyReads is the middleware of a route with route.Route.Costly: its costly
// requests take one of the tenant's slots.
func costlyReads(slots *Slots, costly func(echo.Context) bool) (echo.MiddlewareFunc, error) {
	return InflightConfig{Slots: slots, Skipper: func(c echo.Context) bool { return !costly(c) }}.ToMiddleware()
}
