package tracing_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace/noop"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/app"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/tracing"
)

// BenchmarkTracingCost measures, interleaved in one run so that machine noise hits
// each alike, one read of a risk through the whole router (authentication, the
// store's statements, the log line) on three servers: tracing unset (the default),
// set with a no-op tracer provider (what the middleware, callbacks and context
// lookups cost by themselves), and set with the real exporter sending to an
// in-process collector that discards what it gets. It reports each mean and
//
//	noop/off       the no-op provider's time per request relative to tracing unset
//	exporting/off  the exporting provider's, likewise
//
// Run: go test -run '^$' -bench TracingCost ./internal/tracing/ (docs/tracing.md).
func BenchmarkTracingCost(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	b.Cleanup(sink.Close)
	on := func(c *config.Config) { c.Tracing.Endpoint = sink.URL }
	envs := []*apitest.Env{
		apitest.New(b),
		apitest.NewWith(b, app.Options{Tracing: tracing.Options{Provider: noop.NewTracerProvider()}}, on),
		apitest.New(b, on),
	}
	reqs := make([]apitest.Request, len(envs))
	for i, env := range envs {
		tenant := env.Tenant("Bench")
		var r struct{ ID string }
		env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: tenant.Key,
			JSON: map[string]any{"title": "Vendor contract missing a DPA", "likelihood": 3, "impact": 4}}).Expect(201).Decode(&r)
		reqs[i] = apitest.Request{Method: "GET", Path: "/v2/risks/" + r.ID, Bearer: tenant.Key}
	}
	spent := make([]time.Duration, len(envs))
	for b.Loop() {
		for i, env := range envs {
			start := time.Now()
			res := env.Do(reqs[i])
			spent[i] += time.Since(start)
			if res.Code != http.StatusOK {
				b.Fatalf("%d %s", res.Code, res.Body)
			}
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(spent[0].Nanoseconds())/n, "off-ns/op")
	b.ReportMetric(float64(spent[1].Nanoseconds())/n, "noop-ns/op")
	b.ReportMetric(float64(spent[2].Nanoseconds())/n, "exporting-ns/op")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "noop/off")
	b.ReportMetric(float64(spent[2])/float64(spent[0]), "exporting/off")
}
