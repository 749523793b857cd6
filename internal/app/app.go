// Package app wires riskapi together from its configuration: the store, the
// services, the HTTP server and the scheduled sweep. cmd/api calls it; so do the
// end-to-end tests, which therefore exercise exactly what ships.
package app

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/robfig/cron/v3"

	"github.com/riskapi/riskapi/internal/appetite"
	"github.com/riskapi/riskapi/internal/attachments"
	"github.com/riskapi/riskapi/internal/attachments/attachmentstore"
	"github.com/riskapi/riskapi/internal/audit"
	"github.com/riskapi/riskapi/internal/audit/auditstore"
	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/auth/authstore"
	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/due"
	"github.com/riskapi/riskapi/internal/due/duestore"
	"github.com/riskapi/riskapi/internal/events"
	"github.com/riskapi/riskapi/internal/events/eventstore"
	"github.com/riskapi/riskapi/internal/followup"
	"github.com/riskapi/riskapi/internal/followup/followupstore"
	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/idempotency/gormstore"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/logfield"
	"github.com/riskapi/riskapi/internal/migrations"
	"github.com/riskapi/riskapi/internal/ratelimit"
	"github.com/riskapi/riskapi/internal/requestlog"
	"github.com/riskapi/riskapi/internal/requestlog/requestlogstore"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskstore"
	"github.com/riskapi/riskapi/internal/risks/riskview"
	"github.com/riskapi/riskapi/internal/sandbox/sandboxstore"
	"github.com/riskapi/riskapi/internal/secretkey"
	"github.com/riskapi/riskapi/internal/server"
	"github.com/riskapi/riskapi/internal/sweep"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/tenants/tenantstore"
	"github.com/riskapi/riskapi/internal/tracing"
	"github.com/riskapi/riskapi/internal/trends"
	"github.com/riskapi/riskapi/internal/webhooks"
	"github.com/riskapi/riskapi/internal/webhooks/webhookstore"
)

// Options are knobs for tests; the zero value is production.
type Options struct {
	// BcryptCost 0 means bcrypt's default.
	BcryptCost int
	// Now is the clock. Optional. Default time.Now.
	Now func() time.Time
	// RequestLogSkipper, when it returns true, leaves the request unlogged: for
	// benchmarks that measure what the log costs on one server, with it on and off
	// by turns. Optional. Default: every authenticated request is logged.
	RequestLogSkipper func(echo.Context) bool
	// Webhooks tunes outbound delivery. Optional.
	Webhooks WebhookOptions
	// Tracing tunes the span exporter when OTEL_EXPORTER_OTLP_ENDPOINT is set.
	// Optional.
	Tracing tracing.Options
}

// Admin is the narrow setup of the administration commands (tenant, user, API key
// and webhook source creation): the migrated store and the services over it. It
// needs only DATABASE_URL of the configuration, and builds no HTTP server,
// metrics, session secret or schedule.
type Admin struct {
	Config  config.Config
	DB      *database.DB
	Tenants *tenants.Service
	// Webhooks manages inbound webhook sources (api webhook create).
	Webhooks *webhooks.Service
	Logger   *slog.Logger
	// Due finds what has come due in the register and emits its notices; Serve
	// runs it on SCHEDULE_SPEC (docs/register.md, Due dates).
	Due *due.Finder
	// Snapshots takes each tenant's register snapshot of today; Serve runs it on
	// SCHEDULE_SPEC after Due (docs/register.md, Trends).
	Snapshots *trends.Snapshotter
	// SecretKey is SECRET_KEY, loaded (docs/security.md): the keys that seal
	// secrets, key fingerprints and sign sessions derive from it.
	SecretKey secretkey.Key

	risks       *risks.Service
	riskStore   *riskstore.Store
	appetites   *appetite.Store
	followup    *followup.Service
	followStore *followupstore.Store
	attachments attachments.Store
	events      *eventstore.Store
	emitter     *events.Emitter
	auditLog    *auditstore.Store
	recorder    changes.Recorder // the recording point's recorders
	clock       func() time.Time // Options.Now
	tracing     *tracing.Tracing // nil: OTEL_EXPORTER_OTLP_ENDPOINT unset
	traces      *tracing.Parents // each event's trace, for its deliveries; nil when not tracing
}

// OpenAdmin connects to the store and applies migrations.
func OpenAdmin(ctx context.Context, cfg config.Config, log *slog.Logger, opts Options) (*Admin, error) {
	leases := cfg.Idempotency.Leases()
	tr, err := tracing.New(ctx, cfg.Tracing.Endpoint, opts.Tracing)
	if err != nil {
		return nil, err
	}
	db, err := database.Open(ctx, cfg.Database.URL, database.Options{IdleInTxTimeout: leases.IdleInTx, BusyTimeout: leases.Store,
		MaxOpenConns: cfg.Database.MaxConns, ReadURL: cfg.Database.ReadURL, Pooler: cfg.Database.Pooler, Logger: log,
		Tracing: tr.Provider()})
	if err != nil {
		tr.Close(ctx) // nothing was traced yet: only its exporter to stop
		return nil, err
	}
	var traces *tracing.Parents
	if tr != nil {
		traces = tracing.NewParents()
	}
	if _, err := migrations.Apply(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	key, err := secretkey.Load(cfg.Database.SecretKey, secretkey.Dir(cfg.Database.URL), log)
	if err != nil {
		db.Close()
		return nil, err
	}
	evStore, err := eventstore.New(db, key.For(secretkey.SealWebhookSecrets))
	if err == nil {
		_, err = evStore.SealLegacy(ctx)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	emitter := &events.Emitter{Store: evStore, RetryFor: cfg.Outbound.RetryFor, Now: opts.Now, Traces: traces}
	// The recording point: every write, whichever path makes it, records its change
	// in its own transaction: its event (docs/events.md) and its audit-log entry
	// (docs/audit-log.md).
	auditLog := auditstore.New(db.DB)
	// The audit entry first: on PostgreSQL its INSERT is deferred and carried by the
	// event's (database.Defer, ExecCarrying), one statement for both.
	rec := changes.Recorders{events.Recorder{Emitter: emitter}}
	if withAudit { // false only in the benchmark build (audit_off.go): the same tree without the audit log
		rec = append(changes.Recorders{audit.Recorder{Store: auditLog, Now: opts.Now}}, rec...)
	}
	evStore.Recording(rec)
	tenStore := tenantstore.New(db.DB, rec)
	ten := tenants.NewService(tenStore, opts.BcryptCost, opts.Now)
	attStore := attachmentstore.New(db, rec)
	appetites := appetite.NewStore(db.DB, rec)
	// A risk's write that crosses its appetite records risk.appetite_exceeded in the
	// same transaction (internal/appetite), by the appetite its credential read.
	riskStore := riskstore.New(db.DB, appetite.Recorder{Next: rec, Appetite: credentialAppetite{Next: appetites}})
	// Deleting a risk deletes its attachment rows in the same unit of work.
	followStore := followupstore.New(db, rec)
	riskService := &risks.Service{Store: riskStore, Tx: database.NewRunner(db.DB), Dependents: []risks.Dependent{attStore, followStore},
		Holds: database.NewHolds(db.DB), Owners: tenStore, Logger: log}
	ten.UserDeleted = disownOnDelete(riskService)
	follow := &followup.Service{Store: followStore, Risks: riskService, RiskStore: riskStore, Users: ten,
		Tx: database.NewRunner(db.DB), Snapshot: func(r *risks.Risk) any { return riskview.Of(r) }, Now: opts.Now}
	finder := &due.Finder{Store: duestore.New(db.DB, rec), Now: opts.Now, Logger: log}
	finder.Kinds = dueKinds(finder.Store.(*duestore.Store), riskStore, followStore, tenStore, follow, cfg.Due.ReviewDueDays)
	hookStore, err := openWebhookStore(ctx, db, authstore.New(db.DB, nil), key, evStore)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &Admin{Config: cfg, DB: db, Tenants: ten, Logger: log, risks: riskService, riskStore: riskStore, attachments: attStore, clock: opts.Now,
		followup: follow, followStore: followStore, Due: finder, appetites: appetites,
		Snapshots: &trends.Snapshotter{Store: trends.NewStore(db.DB), Now: opts.Now, Logger: log,
			// The longest a change's transaction may take to commit, and a minute of
			// clock skew between instances.
			Settle: max(cfg.Uploads.ImportTimeout, leases.Store) + time.Minute},
		SecretKey: key, tracing: tr, traces: traces,
		events: evStore, emitter: emitter, auditLog: auditLog, recorder: rec, Webhooks: webhooks.NewService(hookStore.Recording(rec), riskService, opts.Now)}, nil
}

// disownOnDelete makes a deleted user's risks, live and in the sandbox (whose risks
// the account's users own), name owners in the deletion's transaction.
func disownOnDelete(riskService *risks.Service) func(context.Context, tenants.User) error {
	return func(ctx context.Context, u tenants.User) error {
		for _, scope := range []string{u.TenantID, ids.SandboxOf(u.TenantID)} {
			if _, err := riskService.DisownUser(ctx, scope, u.ID, u.Email); err != nil {
				return err
			}
		}
		return nil
	}
}

// Close waits for the services' background writes, releases the store and sends
// the spans still buffered (waiting up to 5s).
func (a *Admin) Close() error {
	a.Tenants.Wait()
	err := a.DB.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if terr := a.tracing.Close(ctx); terr != nil {
		a.Logger.Warn("tracing: spans still buffered at shutdown were lost", slog.String("error", terr.Error()))
	}
	return err
}

func (a *Admin) now() time.Time {
	if a.clock != nil {
		return a.clock()
	}
	return time.Now()
}

// Maintenance is Admin plus the sweeps: what `api sweep` needs (cmd/api's
// sweepSettings), still without an HTTP server or the session secret.
type Maintenance struct {
	*Admin
	// sessions is the session store: Sweep deletes expired sessions through it.
	sessions    *authstore.Store
	Idempotency *gormstore.Store
	Sweeper     *idempotency.Sweeper
	// Orphans removes attachment bytes no row refers to; Sweep runs it.
	Orphans *attachments.OrphanSweeper
	// RequestLogSweeper deletes request-log entries older than REQUEST_LOG_TTL;
	// Sweep runs it.
	RequestLogSweeper *sweep.ByAge

	requestLog *requestlogstore.Store
	// EventSweeper deletes events older than EVENT_TTL; Sweep runs it.
	EventSweeper *sweep.ByAge
	// AuditSweeper deletes audit-log entries older than AUDIT_LOG_TTL; Sweep runs it.
	AuditSweeper *sweep.ByAge
	// HeatCountFolder folds the heat map's delta counts (PostgreSQL; a no-op on
	// SQLite, whose triggers fold in place); Sweep runs it.
	HeatCountFolder *sweep.Batched
	// DueNoticeSweeper deletes due-date notices past due.RetentionDays; Sweep
	// runs it.
	DueNoticeSweeper *sweep.ByAge
}

// OpenMaintenance opens Admin and wires the sweeps.
func OpenMaintenance(ctx context.Context, cfg config.Config, log *slog.Logger, opts Options) (*Maintenance, error) {
	a, err := OpenAdmin(ctx, cfg, log, opts)
	if err != nil {
		return nil, err
	}
	idemStore := gormstore.New(a.DB)
	logStore := requestlogstore.New(a.DB)
	return &Maintenance{Admin: a, Idempotency: idemStore, requestLog: logStore,
		RequestLogSweeper: &sweep.ByAge{Name: "request log sweep", DeleteBefore: logStore.DeleteBefore,
			TTL: cfg.Sweep.RequestLogTTL, Now: opts.Now, Logger: log, Pacing: requestLogPacing(a.DB.Dialect)},
		sessions: authstore.New(a.DB.DB, a.recorder),
		Sweeper:  &idempotency.Sweeper{Store: idemStore, Now: opts.Now, Logger: log, Pacing: sweepPacing(a.DB.Dialect)},
		Orphans: &attachments.OrphanSweeper{Files: attachments.Files{Dir: cfg.Uploads.Dir}, Store: a.attachments,
			Grace: cfg.Idempotency.Leases().OrphanGrace, Now: opts.Now, Logger: log},
		EventSweeper: &sweep.ByAge{Name: "event sweep", DeleteBefore: a.events.DeleteCreatedBefore,
			TTL: cfg.Sweep.EventTTL, Pacing: sweepPacing(a.DB.Dialect), Now: opts.Now, Logger: log},
		// The sweep is the only way an audit-log entry ever leaves the log.
		AuditSweeper: &sweep.ByAge{Name: "audit log sweep", DeleteBefore: a.auditLog.DeleteBefore,
			TTL: cfg.Sweep.AuditLogTTL, Pacing: sweepPacing(a.DB.Dialect), Now: opts.Now, Logger: log},
		// Without it the deltas would pile up and the heat map's reads grow with the
		// writes; a batch never makes a writer wait (riskstore.Store.FoldHeatCounts).
		HeatCountFolder: &sweep.Batched{Name: "heat count fold", Batch: a.riskStore.FoldHeatCounts,
			Pacing: sweepPacing(a.DB.Dialect), Logger: log},
		// A day past the retention: no kind's window reaches back to what it deletes.
		DueNoticeSweeper: &sweep.ByAge{Name: "due notice sweep", DeleteBefore: a.Due.Store.(*duestore.Store).DeleteBefore,
			TTL: (due.RetentionDays + 1) * 24 * time.Hour, Pacing: sweepPacing(a.DB.Dialect), Now: opts.Now, Logger: log},
	}, nil
}

// App is a wired riskapi: Maintenance plus the HTTP server, the request log's
// writer and the delivery of events to webhook endpoints.
type App struct {
	*Maintenance
	// Sessions signs and verifies session tokens with JWT_SECRET (or the stored one).
	Sessions *auth.Sessions
	Echo     *echo.Echo
	// Events manages webhook endpoints and delivers events; Serve runs its worker.
	Events *Events
	// RequestLog buffers request-log entries and inserts them in batches off the
	// request path (docs/requests.md); Close flushes it.
	RequestLog *requestlog.Writer
	// redis is the shared rate limit store when REDIS_URL is set, else nil.
	redis *ratelimit.Redis
	// connsRefused counts connections closed over MAX_CONNS_PER_CLIENT.
	connsRefused prometheus.Counter
}

// Close stores the request-log entries still buffered (waiting up to 10s), closes
// the rate limit store's connections, waits for the refused sign-ins being
// recorded, then closes what Maintenance holds. Call it once the server has stopped.
func (a *App) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.RequestLog.Close(ctx); err != nil {
		a.Logger.Warn("request log: entries still buffered at shutdown were lost", slog.String("error", err.Error()))
	}
	if a.redis != nil {
		a.redis.Close()
	}
	if a.Sessions != nil {
		a.Sessions.Wait()
	}
	return a.Maintenance.Close()
}

// Open connects to the store, applies migrations and builds the server.
func Open(ctx context.Context, cfg config.Config, log *slog.Logger, opts Options) (*App, error) {
	m, err := OpenMaintenance(ctx, cfg, log, opts)
	if err != nil {
		return nil, err
	}
	secret, err := auth.SessionSecret(cfg.Auth.JWTSecret, m.SecretKey.For(secretkey.SignSessions), log)
	if err == nil {
		// The secret riskapi generated before SECRET_KEY signs nothing any more.
		err = m.sessions.DeleteSetting(ctx, legacyJWTSetting)
	}
	if err != nil {
		m.Close()
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.Sweeper.Metrics = idempotency.NewMetrics(reg)
	logWriter, err := requestlog.NewWriter(requestlog.WriterConfig{Store: m.requestLog,
		BatchSize: requestLogBatch(m.DB.Dialect), Metrics: requestlog.NewMetrics(reg), Logger: log})
	evs := newEvents(m.Admin, reg, opts.Webhooks)
	if err != nil {
		m.Close()
		return nil, err
	}
	app := &App{Maintenance: m, RequestLog: logWriter, Events: evs,
		Sessions: auth.NewSessions(m.sessions, m.Tenants, secret, opts.Now, log),
		connsRefused: promauto.With(reg).NewCounter(prometheus.CounterOpts{Name: "riskapi_connections_refused_total",
			Help: "Connections closed at once because their client had MAX_CONNS_PER_CLIENT open."})}
	var limits ratelimit.Store // nil: each instance counts alone
	if url := cfg.RateLimit.RedisURL; url != "" {
		if app.redis, err = ratelimit.NewRedis(url, cfg.RateLimit.RedisPrefix); err != nil {
			logWriter.Close(ctx)
			m.Close()
			return nil, err
		}
		limits = app.redis
	}
	app.Echo, err = server.New(server.Deps{
		DB: m.DB, Tenants: m.Tenants, Sessions: app.Sessions, Risks: m.risks, Idempotency: m.Idempotency,
		Attachments: m.attachments, Followup: m.followup, Appetite: m.appetites, Trends: trends.NewStore(m.DB.DB), Webhooks: m.Webhooks, Metrics: reg, IdempotencyMetrics: m.Sweeper.Metrics,
		RequestLog: logWriter, RequestLogSkipper: opts.RequestLogSkipper, RequestLogStore: m.requestLog, AuditLog: m.auditLog,
		Sandbox:         sandboxstore.New(m.DB.DB, m.recorder),
		IdempotencyKeys: m.Idempotency, Logger: log, Now: opts.Now, RateLimits: limits, Events: evs.HTTP,
		FingerprintKey: m.SecretKey.For(secretkey.Fingerprint), Tracing: m.tracing.Provider(),
	}, cfg)
	if err != nil {
		app.Close()
		return nil, err
	}
	return app, nil
}

// Sweep runs one idempotency sweep now and returns how many records it deleted. It
// then sweeps orphaned attachment bytes, expired sessions, and request-log entries,
// events and audit-log entries past their TTLs, and folds the heat map's delta
// counts, which it logs but does not count (the
// count is the idempotency records', api sweep's contract); their failures are
// logged, not returned, so they never hide the records' result.
func (a *Maintenance) Sweep(ctx context.Context) (int, error) {
	n, err := a.Sweeper.Sweep(ctx)
	if a.Orphans != nil && ctx.Err() == nil {
		if _, oerr := a.Orphans.Sweep(ctx); oerr != nil {
			a.Logger.Error("attachment orphan sweep failed", slog.String("error", oerr.Error()))
		}
	}
	if ctx.Err() == nil {
		if _, lerr := a.RequestLogSweeper.Sweep(ctx); lerr != nil {
			a.Logger.Error("request log sweep failed", slog.String("error", lerr.Error()))
		}
	}
	if ctx.Err() == nil {
		if m, serr := a.sessions.DeleteExpiredSessions(ctx, a.now()); serr != nil {
			a.Logger.Error("session sweep failed", slog.String("error", serr.Error()))
		} else if m > 0 {
			a.Logger.Info("session sweep", slog.Int("deleted", m))
		}
	}
	if ctx.Err() == nil {
		if _, eerr := a.EventSweeper.Sweep(ctx); eerr != nil {
			a.Logger.Error("event sweep failed", slog.String("error", eerr.Error()))
		}
	}
	if ctx.Err() == nil {
		if _, aerr := a.AuditSweeper.Sweep(ctx); aerr != nil {
			a.Logger.Error("audit log sweep failed", slog.String("error", aerr.Error()))
		}
	}
	if ctx.Err() == nil {
		// Every expiry is in the audit log, also a key's no request noticed.
		if m, kerr := a.Tenants.RecordExpiredKeys(ctx, 1000); kerr != nil {
			a.Logger.Error("api key expiry sweep failed", slog.String("error", kerr.Error()))
		} else if m > 0 {
			a.Logger.Info("api key expiry sweep", slog.Int("recorded", m))
		}
	}
	if ctx.Err() == nil {
		if _, derr := a.DueNoticeSweeper.Sweep(ctx); derr != nil {
			a.Logger.Error("due notice sweep failed", slog.String("error", derr.Error()))
		}
	}
	if ctx.Err() == nil {
		if _, ferr := a.HeatCountFolder.Sweep(ctx); ferr != nil {
			a.Logger.Error("heat count fold failed", slog.String("error", ferr.Error()))
		}
	}
	return n, err
}

// The settings rows where riskapi kept generated keys before SECRET_KEY: read once
// to re-seal what the old sealing key sealed, then deleted, so that the database
// alone holds nothing that unseals secrets or signs sessions (docs/security.md).
const (
	legacyJWTSetting  = "jwt_secret"
	legacySealSetting = "webhook_secret_key"
)

// openWebhookStore opens the webhook store sealing with the key derived from
// SECRET_KEY, seals any secret stored before secrets were sealed, and re-seals the
// source and endpoint secrets sealed under a sealing key found in the settings table
// (kept there before SECRET_KEY, or put there to rotate it), which it then deletes.
func openWebhookStore(ctx context.Context, db *database.DB, settings auth.SettingStore, key secretkey.Key,
	endpoints *eventstore.Store) (*webhookstore.Store, error) {
	st, err := webhookstore.New(db, key.For(secretkey.SealWebhookSecrets))
	if err != nil {
		return nil, err
	}
	if _, err := st.SealLegacy(ctx); err != nil {
		return nil, err
	}
	v, err := settings.Setting(ctx, legacySealSetting)
	if errors.Is(err, auth.ErrSettingNotFound) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	old, err := hex.DecodeString(v)
	if err != nil {
		return nil, fmt.Errorf("%s setting: %w", legacySealSetting, err)
	}
	if _, err := st.Reseal(ctx, old); err != nil {
		return nil, err
	}
	if _, err := endpoints.Reseal(ctx, old); err != nil {
		return nil, err
	}
	return st, settings.DeleteSetting(ctx, legacySealSetting)
}

// sweepPacing paces the idempotency and event sweeps. On SQLite every batch takes
// the one write lock, and a batch of records under random (UUID) keys dirties about
// one page of the key's index per row: 1000-row batches held the lock for 150–250 ms
// while 1M records were swept, more than a write's p99. Batches of 200, each followed
// by a rest at least as long as itself, keep each hold short and leave writers the
// lock at least half the time; the batches queue at the write gate with the writers
// (internal/database/writegate.go). PostgreSQL's writers do not wait on the sweep:
// batches of 1000, no pause.
func sweepPacing(d database.Dialect) sweep.Pacing {
	if d == database.SQLite {
		return sweep.Pacing{Size: 200, Pause: 5 * time.Millisecond, Rest: 1}
	}
	return sweep.Pacing{}
}

// requestLogBatch bounds the request log's inserts. On SQLite a batch holds the one
// write lock while every writer queues behind it: 500 entries cost about 14 ms of CPU
// (28 µs each, docs/performance.md), more on a busy machine, and a keyed write's entry
// adds a random page of the idempotency-key index. 100 keep each hold to a few
// milliseconds for a few more commits a second. PostgreSQL: the default (500).
func requestLogBatch(d database.Dialect) int {
	if d == database.SQLite {
		return 100
	}
	return 0
}

// requestLogPacing paces the request log's sweep. On SQLite a batch of log entries
// costs several times a batch of idempotency records (seven b-trees per row, two of
// them in random order: request ids and keys), and 1000-row batches with a 5 ms
// pause starved writers past their busy timeout (503s) while 1M entries were swept;
// small batches, each followed by a rest as long as itself, leave writers the lock
// at least half the time. PostgreSQL's writers do not wait on the sweep.
func requestLogPacing(d database.Dialect) sweep.Pacing {
	if d == database.SQLite {
		return sweep.Pacing{Size: 200, Pause: 20 * time.Millisecond, Rest: 1}
	}
	return sweep.Pacing{}
}

// heatFoldEvery is how often Serve folds the heat map's delta counts (PostgreSQL).
const heatFoldEvery = 10 * time.Second

// foldHeatCounts folds the heat map's delta counts every heatFoldEvery until ctx
// ends; a failure is logged and retried at the next tick.
func (a *App) foldHeatCounts(ctx context.Context) {
	t := time.NewTicker(heatFoldEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := a.HeatCountFolder.Sweep(ctx); err != nil && ctx.Err() == nil {
				a.Logger.Error("heat count fold failed", slog.String("error", err.Error()))
			}
		}
	}
}

// Serve listens on the configured address, runs the sweep on its schedule, and on
// ctx's end drains (drain) and returns nil. ready, if not nil, receives the bound
// address once listening.
func (a *App) Serve(ctx context.Context, ready func(addr net.Addr)) error {
	ln, err := net.Listen("tcp", a.Config.HTTP.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", a.Config.HTTP.Addr, err)
	}
	ln = server.ConnLimit(ln, a.Config.HTTP.MaxConnsPerClient, a.connsRefused, a.Logger)
	ln = server.HeaderLimit(ln, a.Logger) // 431 as problem+json
	// On SQLite, the imports a process that died left pending are hidden and
	// taken back before anything is served or delivered (docs/register.md "Import").
	if err := a.risks.ResumeTakeBacks(ctx); err != nil {
		ln.Close()
		return err
	}
	var inFlight sync.WaitGroup
	srv := &http.Server{Handler: counted(a.Echo, &inFlight),
		ReadHeaderTimeout: a.Config.HTTP.HeaderTimeout, IdleTimeout: a.Config.HTTP.IdleTimeout,
		ErrorLog: slog.NewLogLogger(a.Logger.Handler(), slog.LevelWarn)}

	sched := cron.New()
	if _, err := sched.AddFunc(a.Config.Sweep.Schedule, func() {
		if _, err := a.Sweep(ctx); err != nil {
			a.Logger.Error("idempotency sweep failed", slog.String("error", err.Error()))
		}
	}); err != nil {
		ln.Close()
		return fmt.Errorf("SWEEP_SCHEDULE: %w", err)
	}
	// Every instance looks for what has come due; each notice is emitted once
	// however many look (internal/due); then it snapshots the register. cron skips a run while the last still runs.
	if _, err := sched.AddJob(a.Config.Due.Schedule, cron.NewChain(cron.SkipIfStillRunning(cron.DiscardLogger)).Then(cron.FuncJob(func() {
		_, _ = a.Due.Run(ctx) // Run logs its failures
		// Today's snapshot of each tenant, as of this run: one row per (tenant, day)
		// however many instances take it (internal/trends).
		_, _ = a.Snapshots.Run(ctx)
	}))); err != nil {
		ln.Close()
		return fmt.Errorf("SCHEDULE_SPEC: %w", err)
	}
	sched.Start()
	defer func() { <-sched.Stop().Done() }()
	// The heat map sums a tenant's delta counts not yet folded: folding them every
	// heatFoldEvery keeps that to a few seconds of writes, not SWEEP_SCHEDULE's.
	if a.DB.Dialect == database.Postgres {
		fctx, stopFold := context.WithCancel(ctx)
		foldDone := make(chan struct{})
		go func() { defer close(foldDone); a.foldHeatCounts(fctx) }()
		defer func() { stopFold(); <-foldDone }()
	}
	// Every instance delivers events. On shutdown it stops claiming and lets the
	// attempts in flight finish (each at most delivery.AttemptTimeout); whatever it
	// had claimed but not started goes back to the queue for any instance.
	wctx, stopWorker := context.WithCancel(ctx)
	workerDone := make(chan struct{})
	go func() { defer close(workerDone); a.Events.run(wctx, a.Logger) }()
	defer func() { stopWorker(); <-workerDone }()

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
	a.drain(ctx, srv, &inFlight)
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// drain stops accepting connections and returns within ShutdownGrace (30 s): in-flight
// requests may finish for the first 5/6 of it. Whatever still runs then — an upload
// trickling in, a client that stopped reading — has its connection closed: its body
// read fails, so its handler returns and removes its spooled files; drain waits the
// last 1/6 for that, so that the process exits clean (README.md, Connections).
func (a *App) drain(ctx context.Context, srv *http.Server, inFlight *sync.WaitGroup) {
	a.Logger.Info("shutting down: finishing in-flight requests")
	closeWait := a.Config.HTTP.ShutdownGrace / 6
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.Config.HTTP.ShutdownGrace-closeWait)
	defer cancel()
	if err := srv.Shutdown(sctx); err == nil {
		return
	}
	a.Logger.Warn("shutdown grace over: closing the connections of unfinished requests",
		logfield.Millis("grace", a.Config.HTTP.ShutdownGrace))
	srv.Close()
	done := make(chan struct{})
	go func() { inFlight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(closeWait):
		a.Logger.Warn("requests still running after their connections closed")
	}
}

// counted counts h's requests in flight, so that drain can wait for them.
func counted(h http.Handler, inFlight *sync.WaitGroup) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inFlight.Add(1)
		defer inFlight.Done()
		h.ServeHTTP(w, r)
	})
}
