package riskhttp_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/apiversion"
)

// BenchmarkVersionRendering measures, interleaved in one run so that machine noise
// hits both alike, the same request answered in the newest version (no transform)
// and in 2026-12-01 (the owner change applied to the body and the answer): a page of
// 100 risks, and a PATCH. It reports each one's mean latency and old/newest, the
// cost of version rendering (goal ≤ 1.05, docs/api-versions.md).
//
// Run: go test -run '^$' -bench VersionRendering ./internal/risks/riskhttp/ (and with
// TEST_DATABASE_URL=postgres://… for PostgreSQL).
func BenchmarkVersionRendering(b *testing.B) {
	env := apitest.New(b)
	a := env.TenantAt("Bench", apiversion.V20270115)
	in := func(v apiversion.Version) http.Header { return http.Header{apiversion.Header: {string(v)}} }
	newest, old := in(apiversion.V20270115), in(apiversion.V20261201)
	var id string
	for i := range 100 {
		r := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, Header: old,
			JSON: map[string]any{"title": fmt.Sprintf("risk %d", i), "likelihood": 2, "impact": 3, "owner": "ann",
				"description": "a description of some length, as a register's risks have", "metadata": map[string]any{"k": "v"}}}).
			Expect(http.StatusCreated).Map()
		id = r["id"].(string)
	}
	timed := func(d *time.Duration, req apitest.Request) {
		start := time.Now()
		res := env.Do(req)
		*d += time.Since(start)
		if res.Code != http.StatusOK {
			b.Fatalf("%d %s", res.Code, res.Body)
		}
	}
	b.Run("list", func(b *testing.B) {
		var plain, rendered time.Duration
		for b.Loop() {
			timed(&plain, apitest.Request{Method: http.MethodGet, Path: "/v2/risks?limit=100", Bearer: a.Key, Header: newest})
			timed(&rendered, apitest.Request{Method: http.MethodGet, Path: "/v2/risks?limit=100", Bearer: a.Key, Header: old})
		}
		reportRendering(b, plain, rendered)
	})
	b.Run("write", func(b *testing.B) {
		var plain, rendered time.Duration
		for i := 0; b.Loop(); i++ {
			timed(&plain, apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + id, Bearer: a.Key, Header: newest,
				Body: fmt.Sprintf(`{"title":"p%d","owner":{"name":"ann"}}`, i)})
			timed(&rendered, apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + id, Bearer: a.Key, Header: old,
				Body: fmt.Sprintf(`{"title":"o%d","owner":"ann"}`, i)})
		}
		reportRendering(b, plain, rendered)
	})
}

func reportRendering(b *testing.B, plain, rendered time.Duration) {
	n := float64(b.N)
	b.ReportMetric(float64(plain.Nanoseconds())/n, "newest-ns/op")
	b.ReportMetric(float64(rendered.Nanoseconds())/n, "old-ns/op")
	b.ReportMetric(float64(rendered)/float64(plain), "old/newest")
}
