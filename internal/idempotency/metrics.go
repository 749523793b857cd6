package idempotency

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcome is what the engine did with one keyed request; it labels metrics and logs.
type Outcome string

// Outcomes.
const (
	// OutcomeExecuted: the handler ran and its 2xx response was stored.
	OutcomeExecuted Outcome = "executed"
	// OutcomeTakenOver: as executed, but replacing a FAILED or expired record of an
	// earlier attempt.
	OutcomeTakenOver Outcome = "taken_over"
	// OutcomeReplayed: the stored response was returned; the handler did not run.
	OutcomeReplayed Outcome = "replayed"
	// OutcomeInProgress: refused with 409, another request holds the key.
	OutcomeInProgress Outcome = "in_progress"
	// OutcomeKeyReused: refused with 422, the key's record has another fingerprint.
	OutcomeKeyReused Outcome = "key_reused"
	// OutcomeFailed: the handler answered non-2xx, errored or panicked; its writes
	// were rolled back and the record marked FAILED.
	OutcomeFailed Outcome = "failed"
	// OutcomeStoreUnavailable: refused with 503, the record store failed.
	OutcomeStoreUnavailable Outcome = "store_unavailable"
)

// Metrics are the engine's Prometheus metrics:
// riskapi_idempotency_requests_total{outcome}, riskapi_idempotency_sweep_deleted_total
// and riskapi_idempotency_sweep_duration_seconds.
type Metrics struct {
	requests      *prometheus.CounterVec
	sweepDeleted  prometheus.Counter
	sweepDuration prometheus.Histogram
}

// NewMetrics creates the metrics and registers them with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "riskapi_idempotency_requests_total",
			Help: "Keyed write requests by outcome.",
		}, []string{"outcome"}),
		sweepDeleted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "riskapi_idempotency_sweep_deleted_total",
			Help: "Expired idempotency records deleted by the sweep.",
		}),
		sweepDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "riskapi_idempotency_sweep_duration_seconds",
			Help:    "Duration of one idempotency sweep.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}),
	}
	for _, o := range []Outcome{OutcomeExecuted, OutcomeTakenOver, OutcomeReplayed, OutcomeInProgress,
		OutcomeKeyReused, OutcomeFailed, OutcomeStoreUnavailable} {
		m.requests.WithLabelValues(string(o))
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.sweepDeleted, m.sweepDuration)
	}
	return m
}

func (m *Metrics) outcome(o Outcome) {
	if m != nil {
		m.requests.WithLabelValues(string(o)).Inc()
	}
}

func (m *Metrics) swept(n int, d time.Duration) {
	if m != nil {
		m.sweepDeleted.Add(float64(n))
		m.sweepDuration.Observe(d.Seconds())
	}
}
