package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/riskapi/riskapi/internal/attachments"
	"github.com/riskapi/riskapi/internal/attachments/attachmenthttp"
	"github.com/riskapi/riskapi/internal/audit/audithttp"
	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/events/eventhttp"
	"github.com/riskapi/riskapi/internal/followup/followuphttp"
	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/ratelimit"
	"github.com/riskapi/riskapi/internal/requestlog/requestloghttp"
	"github.com/riskapi/riskapi/internal/risks/riskhttp"
	"github.com/riskapi/riskapi/internal/route"
	"github.com/riskapi/riskapi/internal/sandbox/sandboxhttp"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/tenants/tenanthttp"
	"github.com/riskapi/riskapi/internal/trends/trendshttp"
	"github.com/riskapi/riskapi/internal/upload"
	"github.com/riskapi/riskapi/internal/webhooks/sourcehttp"
	"github.com/riskapi/riskapi/internal/webhooks/webhookhttp"
)

// table lists every route the server mounts, each declaring its own policy. A new
// route goes into its domain's *http package's Routes; a new domain adds its Routes
// here. docs/openapi.yaml must describe each one (spec_test.go checks both ways).
func table(d Deps, cfg config.Config) []route.Route {
	rs := []route.Route{
		// Probes and the scrape are not traced: a container's health check alone would
		// make a trace every few seconds (docs/tracing.md).
		{Method: http.MethodGet, Path: "/healthz", Handler: healthz, Versions: route.Unauthenticated,
			Body: route.Body{Kind: route.NoBodyLimit}, Untraced: true},
		{Method: http.MethodGet, Path: "/readyz", Handler: readyz(d), Versions: route.Unauthenticated,
			Body: route.Body{Kind: route.NoBodyLimit}, Untraced: true},
		{Method: http.MethodGet, Path: "/metrics", Versions: route.Unauthenticated, Body: route.Body{Kind: route.NoBodyLimit},
			Handler: echo.WrapHandler(promhttp.HandlerFor(d.Metrics, promhttp.HandlerOpts{})), Untraced: true},
		// Signing in and out refuse Idempotency-Key: there is no tenant to scope a
		// record to before login, and a replayed login would hand out a token without
		// its cookie (docs/idempotency.md).
		{Method: http.MethodPost, Path: "/v1/sessions", Handler: auth.LoginHandler(d.Sessions),
			Versions: route.Unauthenticated, SignIn: true, PasswordCheck: true, Idempotency: idempotency.Unsupported},
		{Method: http.MethodDelete, Path: "/sessions", Handler: auth.LogoutHandler(d.Sessions),
			Versions: route.V1, Idempotency: idempotency.Unsupported},
	}
	rs = append(rs, riskhttp.Routes(riskhttp.Config{Risks: d.Risks, RequireIfMatch: cfg.HTTP.RequireIfMatch,
		MaxImportRows: cfg.Uploads.MaxImportRows, ImportTimeout: cfg.Uploads.ImportTimeout, Now: d.Now,
		Past: d.Trends, AuditLogTTL: cfg.Sweep.AuditLogTTL})...)
	rs = append(rs, attachmenthttp.Routes(attachmenthttp.Config{Store: d.Attachments, Risks: d.Risks.Store, Tx: d.Risks.Tx,
		Files: attachments.Files{Dir: cfg.Uploads.Dir}, Now: d.Now})...)
	rs = append(rs, followuphttp.Routes(followuphttp.Config{Service: d.Followup, RequireIfMatch: cfg.HTTP.RequireIfMatch,
		ReviewDueDays: cfg.Due.ReviewDueDays})...)
	rs = append(rs, eventhttp.Routes(d.Events)...)
	rs = append(rs, webhookhttp.Routes(webhookhttp.Config{Service: d.Webhooks, Now: d.Now, Logger: d.Logger})...)
	rs = append(rs, tenanthttp.Routes(tenanthttp.Config{Tenants: d.Tenants, Sessions: d.Sessions, Appetite: d.Appetite})...)
	rs = append(rs, trendshttp.Routes(trendshttp.Config{Store: d.Trends, Now: d.Now})...)
	rs = append(rs, sourcehttp.Routes(sourcehttp.Config{Service: d.Webhooks})...)
	rs = append(rs, audithttp.Routes(audithttp.Config{Store: d.AuditLog})...)
	rs = append(rs, sandboxhttp.Routes(sandboxhttp.Config{Store: d.Sandbox})...)
	rs = append(rs, requestloghttp.Routes(requestloghttp.RoutesConfig{Store: d.RequestLogStore, Keys: d.IdempotencyKeys, Now: d.Now})...)
	return rs
}

func healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 when the instance can serve writes: the store takes a committed
// write within 2 s (database.CheckWrite). Answering reads is not enough: on a full
// disk every write would fail while a ping succeeds.
func readyz(d Deps) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
		defer cancel()
		if err := d.DB.CheckWrite(ctx); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
	}
}

// mounter turns a route's declaration into its middleware and mounts it. Middleware
// goes on each route, never on a group: a group's middleware makes Echo add catch-all
// routes, which would answer a known path called with another method with 404 (or
// 401) instead of 405.
type mounter struct {
	cfg              config.Config
	session, apiKey  echo.MiddlewareFunc // authenticate /v1, /v2
	throttle, signIn echo.MiddlewareFunc // per credential, per address
	idempotency      map[engineKey]echo.MiddlewareFunc
	passwords        echo.MiddlewareFunc // PasswordCheck routes' failure throttle
	failures         ratelimit.Failures  // authThrottle's
	rateLimits       ratelimit.Store
	failed           *failOpen
	requestLog       echo.MiddlewareFunc
	costly           *Slots // each tenant's costly reads in flight; nil: no limit
	spoolDir         string
	log              *slog.Logger
}

// engineKey selects a route's idempotency engine: its policy, and whether its
// records are the caller's own (route.Route.PerPrincipal) or the tenant's.
type engineKey struct {
	policy       idempotency.Policy
	perPrincipal bool
}

// engines builds the idempotency engine of every engineKey. A record's scope is the
// tenant, or for PerPrincipal routes the caller's credential: the engine itself only
// sees an opaque scope (docs/idempotency.md).
func engines(d Deps, cfg config.Config, fp *idempotency.Fingerprinter) (map[engineKey]echo.MiddlewareFunc, error) {
	out := map[engineKey]echo.MiddlewareFunc{}
	for _, p := range []idempotency.Policy{idempotency.Supported, idempotency.Required, idempotency.Unsupported} {
		for _, perPrincipal := range []bool{false, true} {
			scope := auth.TenantID
			if perPrincipal {
				scope = auth.CredentialID
			}
			mw, err := idempotency.Config{
				Store: d.Idempotency, Scope: scope, Policy: func(echo.Context) idempotency.Policy { return p },
				Required: cfg.Idempotency.Required, TTL: cfg.Idempotency.TTL, Lease: cfg.Idempotency.Lease,
				HandlerTimeout: cfg.Idempotency.Leases().Handler,
				// A replayed 201 points at what the first one created, and a replayed risk
				// write carries the ETag of the version it wrote (docs/idempotency.md).
				KeepHeaders:   []string{echo.HeaderLocation, "ETag"},
				Fingerprinter: fp, Now: d.Now, Metrics: d.IdempotencyMetrics, Logger: d.Logger,
				OnOutcome: func(c echo.Context, key string, o idempotency.Outcome) {
					requestloghttp.NoteOutcome(c, key, o)
					noteIdempotency(c, o)
					traceIdempotency(c, o)
				},
			}.ToMiddleware()
			if err != nil {
				return nil, err
			}
			out[engineKey{p, perPrincipal}] = mw
		}
	}
	return out, nil
}

func newMounter(d Deps, cfg config.Config) (*mounter, error) {
	failed := newFailOpen(d.Metrics, d.Logger)
	failures, shared := d.RateLimits.(ratelimit.Failures)
	if !shared {
		failures = ratelimit.NewMemoryFailures()
	}
	m := &mounter{cfg: cfg, session: auth.SessionAuth(d.Sessions), apiKey: auth.APIKeys(d.Tenants),
		throttle: rateLimit(cfg.RateLimit, d.RateLimits, failed), signIn: signInLimit(cfg.RateLimit, d.RateLimits, failed),
		passwords: passwordThrottle(failures, failed), failures: failures, failed: failed, rateLimits: d.RateLimits,
		spoolDir: attachments.Files{Dir: cfg.Uploads.Dir}.TempDir(), log: d.Logger}
	if cfg.HTTP.TenantMaxInflight > 0 {
		m.costly = NewFairSlots(cfg.HTTP.TenantMaxInflight, cfg.HTTP.InstanceMaxCostly)
	}
	if len(d.FingerprintKey) < 32 {
		return nil, errors.New("server: FingerprintKey must be at least 32 bytes")
	}
	fingerprinter := &idempotency.Fingerprinter{MaxBodyBytes: cfg.HTTP.MaxJSONBytes, Key: d.FingerprintKey, Hashers: map[string]idempotency.BodyHasher{
		// Spools the form and hashes its canonical encoding: file bytes are hashed as
		// they stream to disk, never held in memory (docs/idempotency.md).
		echo.MIMEMultipartForm: idempotency.BodyHasherFunc(upload.HashBody),
	}}
	var err error
	if m.idempotency, err = engines(d, cfg, fingerprinter); err != nil {
		return nil, err
	}
	m.requestLog, err = requestloghttp.Config{Sink: d.RequestLog, Skipper: d.RequestLogSkipper,
		Problem: problemOf, Now: d.Now}.ToMiddleware()
	if err != nil {
		return nil, err
	}
	return m, nil
}

// mount adds r under each version it declares (an unauthenticated route at its path
// as is). Errors: r's declaration is invalid.
func (m *mounter) mount(e *echo.Echo, r route.Route) error {
	if err := r.Check(); err != nil {
		return err
	}
	for _, v := range []struct {
		version route.Versions
		prefix  string
		authn   echo.MiddlewareFunc
	}{{route.Unauthenticated, "", nil}, {route.V1, "/v1", m.session}, {route.V2, "/v2", m.apiKey}} {
		if r.Versions&v.version == 0 {
			continue
		}
		chain, err := m.chain(r, v.authn)
		if err != nil {
			return err
		}
		if path := v.prefix + r.Path; strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/v2/") {
			// Before all else: an unknown version is refused whatever the credential,
			// and every answer names the version it is in (docs/api-versions.md).
			chain = append([]echo.MiddlewareFunc{namedVersion(v.authn != nil)}, chain...)
		}
		e.Add(r.Method, v.prefix+r.Path, r.Handler, chain...)
	}
	return nil
}

// chain is r's middleware, outermost first: on authenticated routes the request log
// (docs/requests.md), then the body limit, then spooling (outside
// authentication and idempotency, so that whatever the request's outcome — replay,
// 422, error, panic — its spooled files are removed when it ends; it reads nothing
// itself), authentication by authn (nil: none), the rate limit, scope and role, and
// the limit of the tenant's costly reads in flight (route.Route.Costly), and
// idempotency for writes. A route that refuses Idempotency-Key refuses it before
// anything else about the request is looked at but its credential: an unauthenticated
// request is 401 whatever its headers (docs/idempotency.md).
func (m *mounter) chain(r route.Route, authn echo.MiddlewareFunc) ([]echo.MiddlewareFunc, error) {
	var mw []echo.MiddlewareFunc
	if r.StoreTimeout > 0 {
		mw = append(mw, routeCallTimeout(r.StoreTimeout))
	}
	if authn != nil && m.cfg.HTTP.RequestLog {
		// Outermost, so that its duration and status are the request's; it logs only
		// what passed authentication.
		mw = append(mw, m.requestLog)
	}
	refuseKey := r.Idempotency == idempotency.Unsupported && r.Method != http.MethodGet
	if refuseKey && authn == nil {
		mw = append(mw, m.idempotency[engineKey{r.Idempotency, r.PerPrincipal}])
	}
	switch r.Body.Kind {
	case route.JSONBody:
		mw = append(mw, bodyLimit(m.cfg.HTTP.MaxJSONBytes), bodyDeadline(m.cfg.HTTP.BodyTimeout))
	case route.RawBody:
		mw = append(mw, bodyLimit(r.Body.Limit), bodyDeadline(m.cfg.HTTP.BodyTimeout))
	case route.UploadBody:
		spool, err := upload.Config{Dir: m.spoolDir, Rules: r.Body.Form, Logger: m.log}.ToMiddleware()
		if err != nil {
			return nil, err
		}
		mw = append(mw, bodyLimit(m.cfg.Uploads.MaxBytes), uploadPace(m.cfg.HTTP.UploadMinRate, m.cfg.HTTP.UploadRateWindow), spool)
	}
	switch {
	case authn != nil:
		mw = append(mw, noStore, authThrottle(authn, m.failures, m.failed), pinnedVersion, m.throttle)
	case r.SignIn:
		// Sign-in answers carry the session token: never cached either.
		mw = append(mw, noStore, m.signIn)
	}
	if refuseKey && authn != nil {
		mw = append(mw, m.idempotency[engineKey{r.Idempotency, r.PerPrincipal}])
	}
	if r.PasswordCheck {
		mw = append(mw, m.passwords)
	}
	if r.Scope != "" || r.Admin {
		mw = append(mw, authorize(r.Scope, r.Admin))
	}
	if r.Exists != nil && (r.OncePer > 0 || r.PerTenant.N > 0) {
		mw = append(mw, exists(r.Exists))
	}
	if r.OncePer > 0 {
		mw = append(mw, oncePer(r.OncePer, m.rateLimits, m.failed))
	}
	if r.Costly != nil && m.costly != nil && authn != nil {
		limit, err := costlyReads(m.costly, m.cfg.Database.QueryTimeout, r.Costly)
		if err != nil {
			return nil, err
		}
		mw = append(mw, limit)
	}
	if r.PerTenant.N > 0 { // after OncePer: a call it refuses spends none of the tenant's quota
		mw = append(mw, perTenant(r.PerTenant, m.rateLimits, m.failed))
	}
	// Reads ignore Idempotency-Key (docs/idempotency.md): no middleware to pass.
	if r.Method != http.MethodGet && r.Idempotency != idempotency.Unsupported {
		mw = append(mw, m.idempotency[engineKey{r.Idempotency, r.PerPrincipal}])
	}
	if r.Resource != "" {
		mw = append(mw, translate(r.Resource))
	}
	return mw, nil
}

// exists refuses, before the route's per-resource and per-tenant limits count it, a
// request whose resource check fails (route.Route.Exists).
func exists(check func(echo.Context) error) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := check(c); err != nil {
				return err
			}
			return next(c)
		}
	}
}

// noStore marks every response of an authenticated route Cache-Control: no-store
// (README.md, Connections): what a credential reads — a cookie-authenticated
// download above all — must never be kept by a shared cache and served to another.
// Set before anything answers, it is on replays and errors too.
func noStore(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "no-store")
		return next(c)
	}
}

// authorize refuses with 403 FORBIDDEN a caller whose credential lacks scope ("" for
// none) or, when admin, who is not an administrator of the tenant (auth.Principal's
// Admin); 401 when the route was mounted without authentication.
func authorize(scope tenants.Scope, admin bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			p, err := route.Principal(c)
			if err != nil {
				return err
			}
			if scope != "" && !p.Has(scope) {
				return problem.New(problem.Forbidden, "this credential lacks the %s scope", scope)
			}
			if admin && !p.Admin() {
				return problem.New(problem.Forbidden, "only the tenant's administrators may use this route")
			}
			return next(c)
		}
	}
}
