package server

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/ratelimit"
	"github.com/riskapi/riskapi/internal/reqbody"
)

// bodyLimit refuses bodies over n bytes with 413: at once when Content-Length says
// so, otherwise as soon as reading passes n (http.MaxBytesReader), never buffering.
func bodyLimit(n int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.ContentLength > n {
				return problem.New(problem.PayloadTooLarge, "the request body is larger than %d bytes", n)
			}
			req.Body = http.MaxBytesReader(c.Response(), req.Body, n)
			return next(c)
		}
	}
}

// bodyDeadline gives a JSON or raw body d to arrive (reqbody.Deadline).
func bodyDeadline(d time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			reqbody.Deadline(c.Response(), c.Request(), d)
			return next(c)
		}
	}
}

// uploadPace keeps an upload arriving at min bytes per window (reqbody.MinRate).
func uploadPace(min int64, window time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			reqbody.MinRate(c.Response(), c.Request(), min, window)
			return next(c)
		}
	}
}

// Login attempts per client address: a burst of 10, then one every 6 seconds. Each
// attempt costs a bcrypt comparison, so unlimited guessing would be both a password
// attack and a way to burn CPU. On whenever rate limiting is (RATE_LIMIT_RPS > 0).
var loginLimit = ratelimit.Limit{RPS: 1.0 / 6, Burst: 10}

// limiter is one rate limit: a named policy, counted per key in a store shared by
// every instance (Redis) or kept by this one (memory).
type limiter struct {
	name   string // the policy's name in RateLimit-Policy and the store's keys
	limit  ratelimit.Limit
	store  ratelimit.Store
	key    func(c echo.Context) string
	detail string
	failed *failOpen
	policy string // the RateLimit-Policy field value
}

// newLimiter returns the middleware of a policy named name; limit.RPS 0 lets
// everything through.
func newLimiter(name string, limit ratelimit.Limit, store ratelimit.Store, failed *failOpen,
	key func(echo.Context) string, detail string) echo.MiddlewareFunc {
	if limit.RPS <= 0 {
		return func(next echo.HandlerFunc) echo.HandlerFunc { return next }
	}
	if limit.Burst <= 0 {
		limit.Burst = int(math.Ceil(limit.RPS))
	}
	failed.count.WithLabelValues(name) // the series exists, at 0, before the first failure
	l := &limiter{name: name, limit: limit, store: store, key: key, detail: detail, failed: failed,
		policy: fmt.Sprintf("%q;q=%d;w=%d", name, limit.Burst, ceilSeconds(limit.Window()))}
	return l.middleware
}

// middleware counts the request and answers 429 RATE_LIMITED with Retry-After when
// the bucket is empty. Every answer of a limited route carries the IETF httpapi
// RateLimit fields (draft-ietf-httpapi-ratelimit-headers-09): RateLimit-Policy (the
// quota q per window w seconds) and RateLimit (r remaining now, t seconds until the
// quota is whole again). If the store cannot be reached the request goes through
// uncounted and without RateLimit (fail open): a Redis outage must not take the
// API down.
func (l *limiter) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		// A client that hangs up mid-check must neither go uncounted nor look like
		// the store failing (which lets requests through): the check is not
		// cancelled with the request; the store's own timeouts bound it.
		res, err := l.store.Allow(context.WithoutCancel(ctx), l.name+":"+l.key(c), l.limit)
		if err != nil {
			l.failed.record(ctx, l.name, err)
			return next(c)
		}
		h := c.Response().Header()
		h.Set("RateLimit-Policy", l.policy)
		h.Set("RateLimit", fmt.Sprintf("%q;r=%d;t=%d", l.name, res.Remaining, ceilSeconds(res.ResetAfter)))
		if !res.Allowed {
			return &problem.Problem{Code: problem.RateLimited, Detail: l.detail,
				RetryAfter: time.Duration(max(1, ceilSeconds(res.RetryAfter))) * time.Second}
		}
		return next(c)
	}
}

func ceilSeconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }

// failOpen counts and logs the requests let through because the limit store failed:
// a metric for every one, a warning at most every failOpenLogEvery.
type failOpen struct {
	count  *prometheus.CounterVec
	log    *slog.Logger
	logged atomic.Int64 // unix nanoseconds of the last warning
}

const failOpenLogEvery = 10 * time.Second

func newFailOpen(reg prometheus.Registerer, log *slog.Logger) *failOpen {
	f := &failOpen{log: log, count: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "riskapi_rate_limit_errors_total",
		Help: "Requests let through unlimited because the rate limit store (Redis) failed, by policy.",
	}, []string{"policy"})}
	reg.MustRegister(f.count)
	return f
}

func (f *failOpen) record(ctx context.Context, policy string, err error) {
	f.count.WithLabelValues(policy).Inc()
	now, last := time.Now().UnixNano(), f.logged.Load()
	if now-last >= int64(failOpenLogEvery) && f.logged.CompareAndSwap(last, now) {
		f.log.LogAttrs(ctx, slog.LevelWarn, "rate limit store unreachable: requests pass unlimited",
			slog.String("policy", policy), slog.String("error", err.Error()))
	}
}

// rateLimit limits each credential (API key, or session user) to RATE_LIMIT_RPS with
// bursts of RATE_LIMIT_BURST; it runs after authentication.
func rateLimit(s config.RateLimit, store ratelimit.Store, failed *failOpen) echo.MiddlewareFunc {
	return newLimiter("credential", ratelimit.Limit{RPS: s.RPS, Burst: s.Burst}, store, failed,
		func(c echo.Context) string {
			if p := auth.FromContext(c.Request().Context()); p != nil {
				return string(p.Kind) + ":" + p.CredentialID
			}
			return "ip:" + c.RealIP()
		}, "this credential sent too many requests; retry after the Retry-After delay")
}

// signInLimit limits sign-in attempts per client address (c.RealIP: the connection,
// or X-Forwarded-For from TRUSTED_PROXIES); on whenever rate limiting is.
func signInLimit(s config.RateLimit, store ratelimit.Store, failed *failOpen) echo.MiddlewareFunc {
	limit := loginLimit
	if s.RPS <= 0 {
		limit = ratelimit.Limit{}
	}
	return newLimiter("sign-in", limit, store, failed, func(c echo.Context) string { return c.RealIP() },
		"too many sign-in attempts from this address; retry after the Retry-After delay")
}
