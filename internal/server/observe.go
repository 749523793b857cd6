package server

import (
	"errors"
	"log/slog"
	"net/http"
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
			err := next(c)
			if err != nil {
				c.Error(err)
			}
			took := time.Since(start)
			req, res := c.Request(), c.Response()
			method, route := methodLabel(req.Method), routeLabel(c, err)
			status := strconv.Itoa(res.Status)
			m.requests.WithLabelValues(method, route, status).Inc()
			m.latency.WithLabelValues(method, route, status).Observe(took.Seconds())
			log.LogAttrs(req.Context(), slog.LevelInfo, "request",
				slog.String("method", method), slog.String("route", route),
				slog.Int("status", res.Status), slog.Int64("bytes", res.Size),
				slog.Duration("took", took))
			return nil
		}
	}
}

// knownMethods are the methods a label may name; any other is "other". A client
// chooses the method, so a label taken from it as is would let one client add a
// series (and its bytes) per request (docs/errors.md, "Metrics").
var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
}

func methodLabel(m string) string {
	if knownMethods[m] {
		return m
	}
	return "other"
}

// routeLabel is the matched route's pattern (never the path, which carries IDs), or
// "unmatched" for a path no route knows: for those Echo reports the pattern of the
// nearest node of its tree, which names no route the request reached.
func routeLabel(c echo.Context, err error) string {
	if p := c.Path(); p != "" && !errors.Is(err, echo.ErrNotFound) {
		return p
	}
	return "unmatched"
}
