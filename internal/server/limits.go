package server

import (
	"math"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"golang.org/x/time/rate"

	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/problem"
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

// rateLimit limits each credential (API key, or session user) with a token bucket
// of RATE_LIMIT_RPS and RATE_LIMIT_BURST (golang.org/x/time/rate through Echo's
// limiter).
func rateLimit(s config.RateLimit) echo.MiddlewareFunc {
	return limiter(s.RPS, s.Burst, "this credential sent too many requests; retry after the Retry-After delay")
}

// Login attempts per client address: a burst of 10, then one every 6 seconds. Each
// attempt costs a bcrypt comparison, so unlimited guessing would be both a password
// attack and a way to burn CPU. On whenever rate limiting is (RATE_LIMIT_RPS > 0).
const (
	loginRPS   = 1.0 / 6
	loginBurst = 10
)

func loginLimit(s config.RateLimit) echo.MiddlewareFunc {
	if s.RPS <= 0 {
		return limiter(0, 0, "")
	}
	return limiter(loginRPS, loginBurst, "too many sign-in attempts from this address; retry after the Retry-After delay")
}

// limiter is a token bucket of rps and burst per principal, or per client address
// before authentication; rps 0 lets everything through.
func limiter(rps float64, burst int, detail string) echo.MiddlewareFunc {
	if rps <= 0 {
		return func(next echo.HandlerFunc) echo.HandlerFunc { return next }
	}
	if burst <= 0 {
		burst = int(math.Ceil(rps))
	}
	retryAfter := time.Duration(math.Ceil(1/rps)) * time.Second
	return middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
		Store: middleware.NewRateLimiterMemoryStoreWithConfig(middleware.RateLimiterMemoryStoreConfig{
			Rate: rate.Limit(rps), Burst: burst, ExpiresIn: 3 * time.Minute,
		}),
		IdentifierExtractor: func(c echo.Context) (string, error) {
			if p := auth.FromContext(c.Request().Context()); p != nil {
				return string(p.Kind) + ":" + p.CredentialID, nil
			}
			return c.RealIP(), nil
		},
		DenyHandler: func(c echo.Context, _ string, _ error) error {
			return &problem.Problem{Code: problem.RateLimited, RetryAfter: retryAfter, Detail: detail}
		},
		ErrorHandler: func(c echo.Context, err error) error { return err },
	})
}
