// Package server assembles riskapi's HTTP API from two parts: the middleware chain
// every request passes (chain.go: request id, logs and metrics, recovery) and the
// route table (routes.go), where each route's own declaration (internal/route) becomes
// its per-route chain: body limit, spooling, authentication, rate limit, scope and
// role, idempotency. docs/openapi.yaml describes every route it mounts.
package server

import (
	"github.com/riskapi/riskapi/internal/appetite"
	"github.com/riskapi/riskapi/internal/trends"
	"log/slog"
	"net"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/riskapi/riskapi/internal/attachments"
	"github.com/riskapi/riskapi/internal/audit"
	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/events/eventhttp"
	"github.com/riskapi/riskapi/internal/followup"
	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/ratelimit"
	"github.com/riskapi/riskapi/internal/requestid"
	"github.com/riskapi/riskapi/internal/requestlog"
	"github.com/riskapi/riskapi/internal/requestlog/requestloghttp"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/sandbox"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/via"
	"github.com/riskapi/riskapi/internal/webhooks"
	"github.com/riskapi/riskapi/web"
)

// Deps are the server's collaborators.
type Deps struct {
	DB          *database.DB
	Tenants     *tenants.Service
	Sessions    *auth.Sessions
	Risks       *risks.Service // writes as units of work; its Store serves reads
	Idempotency idempotency.Store
	// Attachments stores attachment rows (their bytes go to config.Uploads.Dir).
	Attachments attachments.Store
	// Followup runs reviews, actions and acceptances (docs/register.md). Required.
	Followup *followup.Service
	// Appetite keeps tenants' risk appetites (docs/register.md). Required.
	Appetite *appetite.Store
	// Trends reads the register's daily snapshots and score histories. Required.
	Trends *trends.Store
	// Webhooks verifies and processes inbound webhook deliveries.
	Webhooks *webhooks.Service
	// RequestLog receives one entry per authenticated request (a requestlog.Writer).
	// Required.
	RequestLog requestloghttp.Sink
	// RequestLogSkipper leaves a request unlogged when it returns true (benchmarks).
	// Optional.
	RequestLogSkipper func(echo.Context) bool
	// AuditLog answers GET /audit-log and /risks/{id}/history. Required.
	AuditLog audit.Store
	// Sandbox erases a tenant's sandbox (DELETE /v1/sandbox/data). Required.
	Sandbox sandbox.Store
	// RequestLogStore answers GET /requests. Required.
	RequestLogStore requestlog.Store
	// IdempotencyKeys answers the key inspector (gormstore.Store). Required.
	IdempotencyKeys requestloghttp.KeyPeeker
	// Events reads events and manages outbound webhook endpoints; its Wake and
	// Metrics hear of every request that committed events (docs/events.md).
	Events eventhttp.Config
	// Metrics receives the HTTP and idempotency metrics and is served at /metrics.
	Metrics *prometheus.Registry
	// IdempotencyMetrics, optional: shared with the sweeper.
	IdempotencyMetrics *idempotency.Metrics
	// Logger receives one line per request and whatever the routes log; every line
	// logged with a request's context carries its request id. Optional. Default
	// slog.Default().
	Logger *slog.Logger
	// Now is the clock. Optional. Default time.Now.
	Now func() time.Time
	// FingerprintKey keys the idempotency fingerprints (secretkey.Fingerprint, at
	// least 32 bytes). Required.
	FingerprintKey []byte
	// RateLimits counts the rate limits: a ratelimit.Redis shared by every instance
	// when REDIS_URL is set. Optional. Default: a ratelimit.Memory of this instance.
	RateLimits ratelimit.Store
	// Tracing, when set, traces every request (tracing.go, docs/tracing.md).
	// Optional. Default nil: no tracing middleware.
	Tracing trace.TracerProvider
}

// New returns the configured Echo instance: the chain, then the route table. cfg is
// a loaded configuration (config.Load or config.Default): New states no defaults of
// its own. Errors: invalid settings or an invalid route declaration.
func New(d Deps, cfg config.Config) (*echo.Echo, error) {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	d.Logger = slog.New(requestid.LogHandler(d.Logger.Handler()))
	if d.RateLimits == nil {
		d.RateLimits = ratelimit.NewMemory()
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = errorHandler(d.Logger)
	e.IPExtractor = clientAddress(cfg.HTTP.TrustedProxies)
	e.SchemeExtractor = scheme(cfg.HTTP.TrustedProxies)
	routes := table(d, cfg)
	useTracing(e, d.Tracing, untraced(routes))
	useChain(e, d.Logger, newHTTPMetrics(d.Metrics), cfg.Idempotency.Leases().Store, cfg.Database.QueryTimeout)
	// Before anything reads a parameter or header (docs/errors.md).
	e.Use(refuseBadBytes)
	// Every /v1 and /v2 answer names its version, the router's 404 too
	// (docs/api-versions.md); a route's chain sets the one it is in.
	e.Use(answeredVersion)
	// Inside the request id: where every change the request records was asked from.
	e.Use(origin)
	// Inside the request id, outside every route's idempotency and unit of work: it
	// links the request to the events it commits.
	e.Use(eventhttp.Capture(d.Events))
	m, err := newMounter(d, cfg)
	if err != nil {
		return nil, err
	}
	for _, r := range routes {
		if err := m.mount(e, r); err != nil {
			return nil, err
		}
	}
	if err := mountMCP(e, m, d); err != nil {
		return nil, err
	}
	// The dashboard (docs/dashboard.md): GET paths that no route above matched.
	if err := web.Routes(e); err != nil {
		return nil, err
	}
	return e, nil
}

// origin puts the request's id, client address (clientAddress) and User-Agent in
// its context once, where the audit log reads them for every change the request
// records (changes.Origin, docs/audit-log.md).
func origin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		call := via.From(req.Context())
		o := changes.Origin{RequestID: requestid.From(req.Context()), IP: c.RealIP(), UserAgent: printable(req.UserAgent(), 512),
			Via: call.Via, Client: printable(call.Client, 256)}
		c.SetRequest(req.WithContext(changes.WithOrigin(req.Context(), o)))
		return next(c)
	}
}

// printable is s as valid UTF-8 without NUL (which PostgreSQL text refuses: a
// header must never make a write fail), cut to at most n bytes on a rune boundary.
func printable(s string, n int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// clientAddress is how a request's client address is found (the sign-in limit keys
// on it): the connection's address, unless that is one of the trusted proxies, whose
// X-Forwarded-For is then read from the right, skipping trusted hops, to the first
// address no trusted proxy vouches for. Without TRUSTED_PROXIES the header is never
// read: any client could forge it to dodge a per-address limit.
func clientAddress(trusted []*net.IPNet) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	return echo.ExtractIPFromXFFHeader(trustOnly(trusted)...)
}

// scheme is how a request's scheme is found: "https" when it came over TLS,
// directly or through a proxy in TRUSTED_PROXIES (its X-Forwarded-Proto), and only
// then — whatever another client claims. The session cookie is Secure exactly then
// (docs/security.md). Echo's default believed the header from any private address.
func scheme(trusted []*net.IPNet) echo.SchemeExtractor {
	return echo.ExtractSchemeFromHeaders(trustOnly(trusted)...)
}

// trustOnly trusts the proxies in trusted and no other address (Echo trusts
// loopback, link-local and private addresses by default).
func trustOnly(trusted []*net.IPNet) []echo.TrustOption {
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return opts
}
