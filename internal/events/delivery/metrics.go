package delivery

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of an attempt, the label of riskapi_webhook_deliveries_total.
const (
	OutcomeDelivered = "delivered" // 2xx in time
	OutcomeRetrying  = "retrying"  // failed, tried again later
	OutcomeGaveUp    = "gave_up"   // failed, and the retry window has passed
)

// Metrics are the worker's Prometheus metrics: riskapi_webhook_deliveries_total
// {outcome} counts attempts; riskapi_webhook_delivery_lag_seconds observes, for each
// delivered event, the time from its queueing to the endpoint's 2xx.
type Metrics struct {
	attempts *prometheus.CounterVec
	lag      prometheus.Histogram
}

// NewMetrics creates the metrics and registers them with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "riskapi_webhook_deliveries_total",
			Help: "Webhook delivery attempts by outcome (delivered, retrying, gave_up).",
		}, []string{"outcome"}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "riskapi_webhook_delivery_lag_seconds",
			Help:    "Time from an event's commit to its delivery (2xx), seconds.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400},
		}),
	}
	for _, o := range []string{OutcomeDelivered, OutcomeRetrying, OutcomeGaveUp} {
		m.attempts.WithLabelValues(o)
	}
	if reg != nil {
		reg.MustRegister(m.attempts, m.lag)
	}
	return m
}

func (m *Metrics) observe(outcome string, lag time.Duration) {
	if m == nil {
		return
	}
	m.attempts.WithLabelValues(outcome).Inc()
	if outcome == OutcomeDelivered {
		m.lag.Observe(lag.Seconds())
	}
}
