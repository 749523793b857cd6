// Package app wires riskapi together from its configuration: the store, the
// services, the HTTP server and the scheduled sweep. cmd/api calls it; so do the
// end-to-end tests, which therefore exercise exactly what ships.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/robfig/cron/v3"

	"github.com/riskapi/riskapi/internal/attachments"
	"github.com/riskapi/riskapi/internal/attachments/attachmentstore"
	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/idempotency/gormstore"
	"github.com/riskapi/riskapi/internal/migrations"
	"github.com/riskapi/riskapi/internal/risks/riskstore"
	"github.com/riskapi/riskapi/internal/server"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/webhooks"
	"github.com/riskapi/riskapi/internal/webhooks/webhookstore"
)

// Options are knobs for tests; the zero value is production.
type Options struct {
	// BcryptCost 0 means bcrypt's default.
	BcryptCost int
	// Now is the clock. Optional. Default time.Now.
	Now func() time.Time
}

// App is a wired riskapi.
type App struct {
	Config      config.Config
	DB          *database.DB
	Tenants     *tenants.Service
	Sessions    *auth.Sessions
	Idempotency *gormstore.Store
	Sweeper     *idempotency.Sweeper
	Echo        *echo.Echo
	Logger      *slog.Logger

	// Orphans removes attachment bytes no row refers to; Sweep runs it.
	Orphans *attachments.OrphanSweeper
	// Webhooks manages inbound webhook sources (api webhook create).
	Webhooks *webhooks.Service

	clock func() time.Time // Options.Now
}

// Open connects to the store, applies migrations and builds the server.
func Open(ctx context.Context, cfg config.Config, log *slog.Logger, opts Options) (*App, error) {
	db, err := database.Open(ctx, cfg.DatabaseURL, database.Options{IdleInTxTimeout: cfg.IdempotencyLease, BusyTimeout: cfg.IdempotencyLease / 2})
	if err != nil {
		return nil, err
	}
	if _, err := migrations.Apply(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	secret, err := auth.LoadOrCreateSecret(ctx, db.DB, cfg.JWTSecret, log)
	if err != nil {
		db.Close()
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	idemMetrics := idempotency.NewMetrics(reg)
	ten := tenants.NewService(db.DB, opts.BcryptCost, opts.Now)
	sessions := auth.NewSessions(db.DB, ten, secret, opts.Now)
	idemStore := gormstore.New(db)
	attStore := attachmentstore.New(db)
	// Deleting a risk deletes its attachment rows in the same transaction.
	riskStore := attachments.CascadeDelete(riskstore.New(db.DB), attStore)
	hooks := webhooks.NewService(webhookstore.New(db), riskStore, opts.Now)
	e, err := server.New(server.Deps{
		DB: db, Tenants: ten, Sessions: sessions, Risks: riskStore,
		Idempotency: idemStore, Metrics: reg, IdempotencyMetrics: idemMetrics, Logger: log, Now: opts.Now,
		Attachments: attStore, Webhooks: hooks,
	}, server.Settings{
		IdempotencyTTL: cfg.IdempotencyTTL, IdempotencyLease: cfg.IdempotencyLease,
		IdempotencyRequired: cfg.IdempotencyRequired, MaxUploadBytes: cfg.MaxUploadBytes,
		RateLimitRPS: cfg.RateLimitRPS, RateLimitBurst: cfg.RateLimitBurst,
		UploadDir: cfg.UploadDir,
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &App{
		Config: cfg, DB: db, Tenants: ten, Sessions: sessions, Idempotency: idemStore, Echo: e, Logger: log,
		Sweeper: &idempotency.Sweeper{Store: idemStore, Now: opts.Now, Metrics: idemMetrics, Logger: log, Pause: sweepPause(db.Dialect)},
		Orphans: &attachments.OrphanSweeper{Files: attachments.Files{Dir: cfg.UploadDir}, Store: attStore,
			Grace: orphanGrace(cfg.IdempotencyLease), Now: opts.Now, Logger: log},
		Webhooks: hooks, clock: opts.Now,
	}, nil
}

// Close releases the store.
func (a *App) Close() error {
	a.Tenants.Wait()
	return a.DB.Close()
}

// Sweep runs one idempotency sweep now and returns how many records it deleted. It
// then sweeps orphaned attachment bytes, which it logs but does not count (the count
// is the idempotency records', api sweep's contract); an orphan sweep failure is
// logged, not returned, so it never hides the records' result.
func (a *App) Sweep(ctx context.Context) (int, error) {
	n, err := a.Sweeper.Sweep(ctx)
	if a.Orphans != nil && ctx.Err() == nil {
		if _, oerr := a.Orphans.Sweep(ctx); oerr != nil {
			a.Logger.Error("attachment orphan sweep failed", slog.String("error", oerr.Error()))
		}
	}
	if ctx.Err() == nil {
		if m, serr := a.Sessions.DeleteExpired(ctx, a.now()); serr != nil {
			a.Logger.Error("session sweep failed", slog.String("error", serr.Error()))
		} else if m > 0 {
			a.Logger.Info("session sweep", slog.Int("deleted", m))
		}
	}
	return n, err
}

func (a *App) now() time.Time {
	if a.clock != nil {
		return a.clock()
	}
	return time.Now()
}

// sweepPause is the breather between sweep batches. SQLite has one writer and its
// busy handler polls with growing sleeps, so a sweep taking the lock batch after
// batch starves writers (p99 ×4.9 while a backlog of 1M is swept); 5 ms between
// batches halves that. PostgreSQL's writers do not wait on the sweep: no pause.
func sweepPause(d database.Dialect) time.Duration {
	if d == database.SQLite {
		return 5 * time.Millisecond
	}
	return 0
}

// orphanGrace is how old unreferenced attachment bytes must be before the sweep
// removes them: well past the lease, beyond which no request's transaction survives,
// and at least attachments.DefaultGrace.
func orphanGrace(lease time.Duration) time.Duration {
	return max(attachments.DefaultGrace, 2*lease)
}

// Serve listens on the configured address, runs the sweep on its schedule, and on
// ctx's end stops accepting, lets in-flight requests finish (up to 30s) and returns.
// ready, if not nil, receives the bound address once listening.
func (a *App) Serve(ctx context.Context, ready func(addr net.Addr)) error {
	ln, err := net.Listen("tcp", a.Config.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", a.Config.Addr, err)
	}
	srv := &http.Server{Handler: a.Echo, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(a.Logger.Handler(), slog.LevelWarn)}

	sched := cron.New()
	if _, err := sched.AddFunc(a.Config.SweepSchedule, func() {
		if _, err := a.Sweep(ctx); err != nil {
			a.Logger.Error("idempotency sweep failed", slog.String("error", err.Error()))
		}
	}); err != nil {
		ln.Close()
		return fmt.Errorf("SWEEP_SCHEDULE: %w", err)
	}
	sched.Start()
	defer func() { <-sched.Stop().Done() }()

	a.Logger.Info("riskapi listening", slog.String("addr", ln.Addr().String()))
	if ready != nil {
		ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	a.Logger.Info("shutting down: finishing in-flight requests")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
