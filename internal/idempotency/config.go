package idempotency

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// Policy is how a write route treats the Idempotency-Key header.
type Policy int

const (
	// Supported: a key is honoured when sent (and required when Config.Required).
	Supported Policy = iota
	// Required: a write without a key gets 400 IDEMPOTENCY_KEY_REQUIRED.
	Required
	// Unsupported: a key is refused with 422 IDEMPOTENCY_UNSUPPORTED_ROUTE, never
	// silently ignored — a client relying on it must learn it has no protection.
	Unsupported
)

// Config configures the idempotency middleware, in the shape of Echo's own.
type Config struct {
	// Skipper defines a function to skip the middleware. Optional. Default
	// middleware.DefaultSkipper.
	Skipper middleware.Skipper
	// Store keeps records and grants reservations. Required.
	Store Store
	// Scope returns the request's scope (riskapi: the tenant from the credential).
	// It runs after authentication; its error is returned as is. Required.
	Scope func(c echo.Context) (string, error)
	// Policy returns the route's policy. Optional. Default: Supported everywhere.
	Policy func(c echo.Context) Policy
	// Required makes every Supported route Required (IDEMPOTENCY_REQUIRED).
	// Optional. Default false.
	Required bool
	// TTL is how long a record is honoured (riskapi: IDEMPOTENCY_TTL, whose default
	// internal/config states). Required.
	TTL time.Duration
	// Lease bounds how long a key can stay PROCESSING. The handler runs under a
	// deadline of HandlerTimeout, which must be shorter, so a live request is never
	// abandoned (riskapi: IDEMPOTENCY_LEASE). Required.
	Lease time.Duration
	// HandlerTimeout bounds the handler and its commit. Optional. Default 80% of
	// Lease.
	HandlerTimeout time.Duration
	// KeepHeaders names the response headers, besides Content-Type, that a COMPLETE
	// record stores and its replays carry (riskapi keeps Location, so a replayed 201
	// points at what the first created). Headers are stored, and replayed, only when
	// named here: one that carried a secret or a per-request value would otherwise be
	// kept for the TTL. Optional. Default none.
	KeepHeaders []string
	// RetryAfter is sent with 409 IDEMPOTENCY_REQUEST_IN_PROGRESS and 503
	// STORE_UNAVAILABLE. Optional. Default 1s.
	RetryAfter time.Duration
	// Fingerprinter computes request fingerprints. Optional. Default: JSON and raw
	// bytes up to 1 MiB.
	Fingerprinter *Fingerprinter
	// Now is the clock. Optional. Default time.Now.
	Now func() time.Time
	// Metrics counts outcomes. Optional.
	Metrics *Metrics
	// OnOutcome is told, once per keyed request that reached its record, the key and
	// what the engine did with it (riskapi's request log and access log line record
	// it; the engine logs no line per request itself). Optional.
	OnOutcome func(c echo.Context, key string, o Outcome)
	// Logger logs what went wrong beside the answer: a store failure, a failed
	// rollback, a record that could not be marked FAILED (never a body). Optional.
	// Default slog.Default().
	Logger *slog.Logger
}

// ToMiddleware validates config, fills the optional fields' defaults and returns
// the middleware. Errors: a missing Store or Scope, a TTL or Lease that is not
// positive, or HandlerTimeout not shorter than Lease.
func (config Config) ToMiddleware() (echo.MiddlewareFunc, error) {
	if config.Store == nil {
		return nil, errors.New("idempotency: Store is required")
	}
	if config.Scope == nil {
		return nil, errors.New("idempotency: Scope is required")
	}
	if config.TTL <= 0 || config.Lease <= 0 {
		return nil, errors.New("idempotency: TTL and Lease must be positive")
	}
	if config.Skipper == nil {
		config.Skipper = middleware.DefaultSkipper
	}
	if config.Policy == nil {
		config.Policy = func(echo.Context) Policy { return Supported }
	}
	if config.HandlerTimeout <= 0 {
		config.HandlerTimeout = config.Lease * 4 / 5
	}
	if config.HandlerTimeout >= config.Lease {
		return nil, errors.New("idempotency: HandlerTimeout must be shorter than Lease")
	}
	if config.RetryAfter <= 0 {
		config.RetryAfter = time.Second
	}
	if config.Fingerprinter == nil {
		config.Fingerprinter = &Fingerprinter{}
	}
	if config.Now == nil {
		config.Now = time.Now
	}
	if config.Logger == nil {
		config.Logger = slog.Default()
	}
	for i, h := range config.KeepHeaders {
		config.KeepHeaders[i] = http.CanonicalHeaderKey(h)
	}
	e := &engine{Config: config}
	return e.middleware, nil
}
