package server

import (
	"log/slog"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
)

// httpMetrics are request count and latency by method, route and status.
type httpMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "riskapi_http_requests_total", Help: "HTTP requests by method, route and status.",
		}, []string{"method", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "riskapi_http_request_duration_seconds", Help: "HTTP request latency by method, route and status.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"method", "route", "status"}),
	}
	reg.MustRegister(m.requests, m.latency)
	return m
}

// observe renders errors here (so the final status is known), then records the
// request's metrics and one structured log line (the request id comes with the
// context: requestid.LogHandler). Bodies, headers and credentials are never logged.
func observe(log *slog.Logger, m *httpMetrics) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			if err := next(c); err != nil {
				c.Error(err)
			}
			took := time.Since(start)
			req, res := c.Request(), c.Response()
			route := c.Path()
			if route == "" {
				route = "unmatched"
			}
			status := strconv.Itoa(res.Status)
			m.requests.WithLabelValues(req.Method, route, status).Inc()
			m.latency.WithLabelValues(req.Method, route, status).Observe(took.Seconds())
			log.LogAttrs(req.Context(), slog.LevelInfo, "request",
				slog.String("method", req.Method), slog.String("route", route),
				slog.Int("status", res.Status), slog.Int64("bytes", res.Size),
				slog.Duration("took", took))
			return nil
		}
	}
}
