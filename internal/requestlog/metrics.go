package requestlog

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Reasons an entry is dropped, the label of riskapi_request_log_entries_dropped_total.
const (
	// DropBufferFull: the Writer's buffer was full (the store is slower than the
	// traffic, or stuck).
	DropBufferFull = "buffer_full"
	// DropInsertFailed: the batch's insert failed.
	DropInsertFailed = "insert_failed"
	// DropClosed: the entry arrived after the Writer was closed.
	DropClosed = "closed"
)

// Metrics are the request log's own Prometheus metrics:
// riskapi_request_log_entries_written_total,
// riskapi_request_log_entries_dropped_total{reason} and
// riskapi_request_log_batch_duration_seconds (one insert of one batch).
type Metrics struct {
	written       prometheus.Counter
	dropped       *prometheus.CounterVec
	batchDuration prometheus.Histogram
}

// NewMetrics creates the metrics and registers them with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		written: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "riskapi_request_log_entries_written_total",
			Help: "Request log entries stored.",
		}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "riskapi_request_log_entries_dropped_total",
			Help: "Request log entries lost, by reason (buffer_full, insert_failed, closed).",
		}, []string{"reason"}),
		batchDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "riskapi_request_log_batch_duration_seconds",
			Help:    "Duration of one batch insert of request log entries.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}),
	}
	for _, r := range []string{DropBufferFull, DropInsertFailed, DropClosed} {
		m.dropped.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.written, m.dropped, m.batchDuration)
	}
	return m
}

func (m *Metrics) drop(reason string, n int) {
	if m != nil {
		m.dropped.WithLabelValues(reason).Add(float64(n))
	}
}

func (m *Metrics) batch(n int, d time.Duration, err error) {
	if m == nil {
		return
	}
	m.batchDuration.Observe(d.Seconds())
	if err == nil {
		m.written.Add(float64(n))
	}
}
