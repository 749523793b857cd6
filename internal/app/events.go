package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/events"
	"github.com/riskapi/riskapi/internal/events/delivery"
	"github.com/riskapi/riskapi/internal/events/eventhttp"
	"github.com/riskapi/riskapi/internal/events/eventstore"
)

// WebhookOptions tune outbound webhook delivery for tests; the zero value is
// production.
type WebhookOptions struct {
	// Backoff spaces retries. Optional. Default delivery.Backoff{} (5s doubling to 1h).
	Backoff delivery.Backoff
	// Poll is how often the worker looks for due deliveries. Optional. Default 1s.
	Poll time.Duration
	// Resolver resolves endpoint host names for the SSRF guard. Optional. Default
	// the system resolver.
	Resolver delivery.Resolver
}

// Events is the delivery side of the event outbox (docs/events.md); emission is
// wired into the stores (OpenAdmin).
type Events struct {
	// Endpoints manages webhook endpoints and redeliveries.
	Endpoints *events.Endpoints
	// Worker delivers due events; Serve runs it.
	Worker *delivery.Worker
	// HTTP is what the server's event routes and Capture need.
	HTTP eventhttp.Config

	store   *eventstore.Store
	dialect database.Dialect
}

func newEvents(a *Admin, reg prometheus.Registerer, o WebhookOptions) *Events {
	cfg, now := a.Config.Outbound, a.clock
	if now == nil {
		now = time.Now
	}
	guard := &delivery.Guard{AllowPrivate: cfg.AllowPrivate, Resolver: o.Resolver}
	endpoints := &events.Endpoints{Store: a.events, Events: a.events, Guard: guard, RetryFor: cfg.RetryFor,
		Max: cfg.EndpointsMax, AutoDisableAfter: cfg.AutoDisableAfter, Now: now}
	sender := delivery.NewSender(guard, now).Trace(a.tracing.Provider(), a.traces)
	worker := &delivery.Worker{Store: a.events, Sender: sender, Backoff: o.Backoff,
		PerEndpoint: cfg.EndpointConcurrency, Poll: o.Poll, Metrics: delivery.NewMetrics(reg), Logger: a.Logger, Now: now}
	worker.AfterFailures = func(ctx context.Context) { autoDisable(ctx, endpoints, a.Logger) }
	return &Events{Endpoints: endpoints, Worker: worker,
		HTTP: eventhttp.Config{Events: a.events, Endpoints: endpoints, Wake: worker, Metrics: eventhttp.NewMetrics(reg),
			Pinger: sender, RequireIfMatch: a.Config.HTTP.RequireIfMatch},
		store: a.events, dialect: a.DB.Dialect}
}

// run delivers until ctx ends. On SQLite, which one process uses at a time, the
// claims left in the store are a crashed run's: they are released at once rather
// than when their leases end.
func (e *Events) run(ctx context.Context, log *slog.Logger) {
	if e.dialect == database.SQLite {
		if n, err := e.store.ReleaseClaims(ctx, e.Worker.Now()); err != nil {
			log.Warn("webhook delivery: could not release a previous run's claims", slog.String("error", err.Error()))
		} else if n > 0 {
			log.Info("webhook delivery: resuming a previous run's claimed deliveries", slog.Int("deliveries", n))
		}
	}
	// Failed attempts run the auto-disable check (Worker.AfterFailures); this runs it
	// too while none come, so an endpoint whose last retry came just before its
	// WEBHOOK_AUTO_DISABLE_AFTER ran out is still disabled.
	go func() {
		t := time.NewTicker(time.Minute)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				autoDisable(ctx, e.Endpoints, log)
			}
		}
	}()
	e.Worker.Run(ctx)
}

// autoDisable disables the endpoints failing for WEBHOOK_AUTO_DISABLE_AFTER, and logs
// what it did.
func autoDisable(ctx context.Context, endpoints *events.Endpoints, log *slog.Logger) {
	if n, err := endpoints.AutoDisable(ctx); err != nil && ctx.Err() == nil {
		log.Error("webhook endpoints: auto-disable failed", slog.String("error", err.Error()))
	} else if n > 0 {
		log.Warn("webhook endpoints disabled after failing for WEBHOOK_AUTO_DISABLE_AFTER", slog.Int("endpoints", n))
	}
}
