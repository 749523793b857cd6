// Package server assembles riskapi's HTTP API: the Echo router, the middleware chain
// (request id, logs and metrics, recovery, body limits, authentication, rate limits,
// idempotency) and every route of api-contract.md section 3.
package server

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"path/filepath"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/time/rate"

	"github.com/riskapi/riskapi/internal/attachments"
	"github.com/riskapi/riskapi/internal/attachments/attachmenthttp"
	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskhttp"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/upload"
	"github.com/riskapi/riskapi/internal/webhooks"
	"github.com/riskapi/riskapi/internal/webhooks/webhookhttp"
	"github.com/riskapi/riskapi/web"
)

// Settings are the server's tunables (from riskapi's configuration).
type Settings struct {
	IdempotencyTTL      time.Duration // default 24h
	IdempotencyLease    time.Duration // default 1m
	IdempotencyRequired bool
	// MaxJSONBytes bounds JSON request bodies. Default 1 MiB.
	MaxJSONBytes int64
	// MaxUploadBytes bounds upload bodies. Default 1 GiB.
	MaxUploadBytes int64
	// UploadDir is where attachment bytes live (and uploads are spooled, in its tmp
	// folder). Default "data/uploads".
	UploadDir string
	// RateLimitRPS and RateLimitBurst limit each credential; RPS 0 turns it off.
	RateLimitRPS   float64
	RateLimitBurst int
}

// Deps are the server's collaborators.
type Deps struct {
	DB          *database.DB
	Tenants     *tenants.Service
	Sessions    *auth.Sessions
	Risks       risks.Store
	Idempotency idempotency.Store
	// Attachments stores attachment rows (their bytes go to Settings.UploadDir).
	Attachments attachments.Store
	// Webhooks verifies and processes inbound webhook deliveries.
	Webhooks *webhooks.Service
	// Metrics receives the HTTP and idempotency metrics and is served at /metrics.
	Metrics *prometheus.Registry
	// IdempotencyMetrics, optional: shared with the sweeper.
	IdempotencyMetrics *idempotency.Metrics
	Logger             *slog.Logger
	// Now is the clock. Optional. Default time.Now.
	Now func() time.Time
}

// unsupportedRoutes refuse an Idempotency-Key with 422: logging in has no tenant to
// scope a record to, and a replayed login would hand out a token without its cookie.
var unsupportedRoutes = map[string]bool{
	"/v1/sessions":              true,
	"/webhooks/inbound/:source": true,
}

// New returns the configured Echo instance. Errors: invalid settings.
func New(d Deps, s Settings) (*echo.Echo, error) {
	if s.MaxJSONBytes <= 0 {
		s.MaxJSONBytes = 1 << 20
	}
	if s.MaxUploadBytes <= 0 {
		s.MaxUploadBytes = 1 << 30
	}
	if s.UploadDir == "" {
		s.UploadDir = filepath.Join("data", "uploads")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	log := d.Logger
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = errorHandler(log)
	// Client addresses come from the connection, not from X-Forwarded-For, which
	// any client can forge to dodge a per-address limit.
	e.IPExtractor = echo.ExtractIPDirect()

	fingerprinter := &idempotency.Fingerprinter{MaxBodyBytes: s.MaxJSONBytes, Hashers: map[string]idempotency.BodyHasher{
		// Spools the form and hashes its canonical encoding: file bytes are hashed as
		// they stream to disk, never held in memory (contract section 5).
		echo.MIMEMultipartForm: idempotency.BodyHasherFunc(upload.HashBody),
	}}
	idem, err := idempotency.Config{
		Store:         d.Idempotency,
		Scope:         auth.TenantID,
		Policy:        policy,
		Required:      s.IdempotencyRequired,
		TTL:           s.IdempotencyTTL,
		Lease:         s.IdempotencyLease,
		Fingerprinter: fingerprinter,
		Now:           d.Now,
		Metrics:       d.IdempotencyMetrics,
		Logger:        log,
	}.ToMiddleware()
	if err != nil {
		return nil, err
	}

	e.Pre(headAsGet)
	e.Use(dropBadRequestID, middleware.RequestID(), observe(log, newHTTPMetrics(d.Metrics)))
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisablePrintStack: true,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			log.Error("panic", slog.String("requestId", c.Response().Header().Get(echo.HeaderXRequestID)),
				slog.String("error", err.Error()), slog.String("stack", string(stack)))
			return problem.New(problem.Internal, "an internal error occurred; the request id identifies it in our logs")
		},
	}))
	jsonLimit := bodyLimit(func(c echo.Context) int64 {
		if uploadRoutes[c.Path()] {
			return s.MaxUploadBytes
		}
		return s.MaxJSONBytes
	})
	files := attachments.Files{Dir: s.UploadDir}
	// Outside authentication and idempotency, so that whatever the request's outcome
	// — replay, 422, error, panic — its spooled files are removed when it ends. It
	// reads nothing itself: the fingerprint or the handler spools on first use.
	spool, err := upload.Config{
		Skipper: func(c echo.Context) bool { return !uploadRoutes[c.Path()] },
		Dir:     files.TempDir(),
		Rules:   attachmenthttp.FormRules,
		Logger:  log,
	}.ToMiddleware()
	if err != nil {
		return nil, err
	}
	attachmentsCfg := attachmenthttp.Config{Store: d.Attachments, Risks: d.Risks, Files: files, Now: d.Now}

	e.GET("/healthz", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]string{"status": "ok"}) })
	e.GET("/readyz", func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
		defer cancel()
		if err := d.DB.Ping(ctx); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
	})
	e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(d.Metrics, promhttp.HandlerOpts{})))

	limit := rateLimit(s)
	// Middleware goes on each route, not on the groups: a group's middleware makes
	// Echo add catch-all routes, which would answer a known path called with another
	// method with 404 (or 401) instead of 405.
	v1 := e.Group("/v1")
	v1.POST("/sessions", auth.LoginHandler(d.Sessions), jsonLimit, loginLimit(s), idem)
	v1chain := []echo.MiddlewareFunc{jsonLimit, spool, auth.SessionAuth(d.Sessions), limit, auth.RequireScopes(), idem}
	v1.DELETE("/sessions", auth.LogoutHandler(d.Sessions), v1chain...)
	riskhttp.Routes(v1, riskhttp.Config{Store: d.Risks, Now: d.Now}, v1chain...)
	attachmenthttp.Routes(v1, attachmentsCfg, v1chain...)

	v2 := e.Group("/v2")
	v2chain := []echo.MiddlewareFunc{jsonLimit, spool, auth.APIKeys(d.Tenants), limit, auth.RequireScopes(), idem}
	riskhttp.Routes(v2, riskhttp.Config{Store: d.Risks, Now: d.Now}, v2chain...)
	attachmenthttp.Routes(v2, attachmentsCfg, v2chain...)

	// Inbound webhooks authenticate by signature and deduplicate by event ID. The
	// idempotency middleware runs first and alone: a request carrying Idempotency-Key
	// gets 422 IDEMPOTENCY_UNSUPPORTED_ROUTE before any of its body is read, whatever
	// its content type.
	webhookLimit := bodyLimit(func(echo.Context) int64 { return webhookhttp.DefaultMaxBodyBytes })
	e.POST("/webhooks/inbound/:source", webhookhttp.Handler(webhookhttp.Config{
		Service: d.Webhooks, MaxBodyBytes: webhookhttp.DefaultMaxBodyBytes, Now: d.Now, Logger: log,
	}), idem, webhookLimit)

	// The dashboard (docs/dashboard.md): GET paths that no route above matched.
	if err := web.Routes(e); err != nil {
		return nil, err
	}
	return e, nil
}

func policy(c echo.Context) idempotency.Policy {
	if unsupportedRoutes[c.Path()] {
		return idempotency.Unsupported
	}
	return idempotency.Supported
}

// headAsGet serves HEAD as the GET of the same route with the body discarded (RFC
// 9110 section 9.3.2): same status and headers, no body, no route of its own. Being
// a GET it needs the read scope and never touches idempotency records.
func headAsGet(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().Method == http.MethodHead {
			c.Request().Method = http.MethodGet
			c.Response().Writer = bodiless{c.Response().Writer}
		}
		return next(c)
	}
}

// bodiless drops a response's body and keeps everything else.
type bodiless struct{ http.ResponseWriter }

func (b bodiless) Write(p []byte) (int, error) { return len(p), nil }

// Unwrap lets http.ResponseController reach the connection's writer.
func (b bodiless) Unwrap() http.ResponseWriter { return b.ResponseWriter }

// uploadRoutes take bodies up to MaxUploadBytes; every other route up to MaxJSONBytes.
var uploadRoutes = map[string]bool{
	"/v1/risks/:id/attachments": true,
	"/v2/risks/:id/attachments": true,
}

// bodyLimit refuses bodies over limit(c) bytes with 413: at once when Content-Length says
// so, otherwise as soon as reading passes n (http.MaxBytesReader), never buffering.
func bodyLimit(limit func(echo.Context) int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req, n := c.Request(), limit(c)
			if req.ContentLength > n {
				return problem.New(problem.PayloadTooLarge, "the request body is larger than %d bytes", n)
			}
			req.Body = http.MaxBytesReader(c.Response(), req.Body, n)
			return next(c)
		}
	}
}

// rateLimit limits each credential (API key, or session user) with a token bucket
// of RateLimitRPS and RateLimitBurst (golang.org/x/time/rate through Echo's limiter).
func rateLimit(s Settings) echo.MiddlewareFunc {
	return limiter(s.RateLimitRPS, s.RateLimitBurst, "this credential sent too many requests; retry after the Retry-After delay")
}

// Login attempts per client address: a burst of 10, then one every 6 seconds. Each
// attempt costs a bcrypt comparison, so unlimited guessing would be both a password
// attack and a way to burn CPU. On whenever rate limiting is (RATE_LIMIT_RPS > 0).
const (
	loginRPS   = 1.0 / 6
	loginBurst = 10
)

func loginLimit(s Settings) echo.MiddlewareFunc {
	if s.RateLimitRPS <= 0 {
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
