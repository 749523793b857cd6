package server

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/logfield"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/via"
)

// httpMetrics are request count and latency by method, route and status.
type httpMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// series caches each label set's two series: WithLabelValues hashes its labels
	// and takes the vector's lock on every call, and every request makes two. The
	// label sets are bounded (methodLabel, routeLabel), so is the cache.
	series sync.Map // seriesKey → *seriesPair
}

type seriesKey struct {
	method, route string
	status        int
}

type seriesPair struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// observe counts one request of method and route answered with status after took.
func (m *httpMetrics) observe(method, route string, status int, took time.Duration) {
	k := seriesKey{method, route, status}
	p, ok := m.series.Load(k)
	if !ok {
		code := strconv.Itoa(status)
		p, _ = m.series.LoadOrStore(k, &seriesPair{
			requests: m.requests.WithLabelValues(method, route, code),
			latency:  m.latency.WithLabelValues(method, route, code),
		})
	}
	sp := p.(*seriesPair)
	sp.requests.Inc()
	sp.latency.Observe(took.Seconds())
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
// request's metrics and its one structured log line (the request id comes with the
// context: requestid.LogHandler), which also names what the idempotency engine did
// with a keyed request (noteIdempotency). A handler's error after the response was
// committed is logged (as "cut") and aborts the connection (abortCut). Bodies, headers and credentials are never
// logged.
func observe(log *slog.Logger, m *httpMetrics) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			note := &accessNote{}
			c.Set(accessNoteKey, note)
			err := next(c)
			// An error after the status line was sent cannot become a problem
			// response: the body is cut (abortCut below).
			cut := err != nil && c.Response().Committed
			if err != nil && !cut {
				c.Error(err)
			}
			took := time.Since(start)
			req, res := c.Request(), c.Response()
			method, route := methodLabel(req.Method), routeLabel(c, err)
			m.observe(method, route, res.Status, took)
			attrs := [12]slog.Attr{slog.String("method", method), slog.String("route", route),
				slog.Int("status", res.Status), slog.Int64("bytes", res.Size),
				logfield.Duration(took)}
			n := 5
			// Who asked, by ids only (never a secret), and the problem's stable code:
			// two different 400s read differently in the log (docs/errors.md, Logs).
			if p := auth.FromContext(req.Context()); p != nil {
				attrs[n], attrs[n+1] = slog.String("tenant", p.Scope), slog.String("credential", p.CredentialID)
				n += 2
			}
			if cut && note.code == "" {
				// What the answer would have been, had it not begun: a read cut by
				// QUERY_TIMEOUT says so, not "store unavailable".
				p, _ := toProblem(err)
				if q := queryTimeout(req.Context(), p); q != nil {
					p = q
				}
				note.code = p.Code
			}
			// A tool call of the MCP server names its envelope and client (docs/mcp.md).
			if call := via.From(req.Context()); call.Via != "" {
				attrs[n], attrs[n+1] = slog.String("via", call.Via), slog.String("client", printable(call.Client, 256))
				n += 2
			}
			if note.code != "" {
				attrs[n] = slog.String("code", string(note.code))
				n++
			}
			if note.idempotency != "" {
				attrs[n] = slog.String("idempotency", string(note.idempotency))
				n++
			}
			if cut {
				attrs[n] = slog.String("cut", err.Error())
				n++
				log.LogAttrs(req.Context(), slog.LevelError, "request", attrs[:n]...)
				abortCut()
			}
			log.LogAttrs(req.Context(), slog.LevelInfo, "request", attrs[:n]...)
			return nil
		}
	}
}

// abortCut ends a response whose handler failed after sending its status: net/http
// closes the connection without the chunked body's last chunk, so the client sees a
// broken transfer (unexpected EOF), never a short body that looks whole. A streamed
// export that fails midway (a store call past its timeout) ends this way
// (docs/register.md, Export).
func abortCut() { panic(http.ErrAbortHandler) }

const accessNoteKey = "server.access"

// accessNote is what inner layers add to a request's log line.
type accessNote struct {
	idempotency idempotency.Outcome
	code        problem.Code // the problem the error handler rendered, if any
}

// noteProblem records, for c's log line, the code of the problem the error handler
// renders (errorHandler); outside observe it does nothing.
func noteProblem(c echo.Context, code problem.Code) {
	if n, ok := c.Get(accessNoteKey).(*accessNote); ok {
		n.code = code
	}
}

// noteIdempotency records, for c's log line, what the idempotency engine did with
// the request (part of its OnOutcome, routes.go); outside observe it does nothing.
func noteIdempotency(c echo.Context, o idempotency.Outcome) {
	if n, ok := c.Get(accessNoteKey).(*accessNote); ok {
		n.idempotency = o
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
