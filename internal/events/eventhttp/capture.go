package eventhttp

import (
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/riskapi/riskapi/internal/events"
	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/requestid"
)

// Metrics counts committed events: riskapi_events_emitted_total{type}.
type Metrics struct {
	emitted *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{emitted: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "riskapi_events_emitted_total",
		Help: "Events committed, by type.",
	}, []string{"type"})}
	for _, t := range events.Types {
		m.emitted.WithLabelValues(string(t))
	}
	if reg != nil {
		reg.MustRegister(m.emitted)
	}
	return m
}

// Waker is told that a request committed events with deliveries to send; the
// delivery worker implements it.
type Waker interface{ Wake() }

// Capture puts the request's id and Idempotency-Key (as the engine reads it:
// idempotency.KeyOf) where Emit finds them (events.WithRequest), and once the
// request has succeeded — its unit of work committed — counts the events it emitted
// and wakes the delivery worker, so that delivery need not wait for the worker's
// next poll. It must run inside the request
// id middleware and outside idempotency and the handler. It uses cfg's Wake and
// Metrics, both optional.
func Capture(cfg Config) echo.MiddlewareFunc {
	wake, m := cfg.Wake, cfg.Metrics
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			ctx := req.Context()
			r := &events.Request{ID: requestid.From(ctx), IdempotencyKey: idempotency.KeyOf(req)}
			c.SetRequest(req.WithContext(events.WithRequest(ctx, r)))
			err := next(c)
			emitted := r.Emitted()
			if len(emitted) == 0 || err != nil || c.Response().Status < 200 || c.Response().Status > 299 {
				return err
			}
			if m != nil {
				for _, t := range emitted {
					m.emitted.WithLabelValues(string(t)).Inc()
				}
			}
			// Only when there is something to send: on SQLite a claim takes the write lock.
			if wake != nil && r.Queued() > 0 {
				wake.Wake()
			}
			return err
		}
	}
}
