// Package server assembles riskapi's HTTP API from two parts: the middleware chain
// every request passes (chain.go: request id, logs and metrics, recovery) and the
// route table (routes.go), where each route's own declaration (internal/route) becomes
// its per-route chain: body limit, spooling, authentication, rate limit, scope and
// role, idempotency. docs/openapi.yaml describes every route it mounts.
package server

import (
	"log/slog"
	"path/filepath"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/riskapi/riskapi/internal/attachments"
	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/requestid"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/webhooks"
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
	// Logger receives one line per request and whatever the routes log; every line
	// logged with a request's context carries its request id. Optional. Default
	// slog.Default().
	Logger *slog.Logger
	// Now is the clock. Optional. Default time.Now.
	Now func() time.Time
}

// New returns the configured Echo instance: the chain, then the route table. Errors:
// invalid settings or an invalid route declaration.
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
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	d.Logger = slog.New(requestid.LogHandler(d.Logger.Handler()))
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = errorHandler(d.Logger)
	// Client addresses come from the connection, not from X-Forwarded-For, which
	// any client can forge to dodge a per-address limit.
	e.IPExtractor = echo.ExtractIPDirect()
	useChain(e, d.Logger, newHTTPMetrics(d.Metrics))
	m, err := newMounter(d, s)
	if err != nil {
		return nil, err
	}
	for _, r := range table(d, s) {
		if err := m.mount(e, r); err != nil {
			return nil, err
		}
	}
	return e, nil
}
