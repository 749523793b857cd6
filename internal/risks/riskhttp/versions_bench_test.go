package riskhttp_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
)

// BenchmarkConditionalPatch measures, interleaved in one run so that machine noise
// hits both alike, a PATCH through the whole router without If-Match and one with
// the If-Match of the version it changes, on the store under test. It reports each
// one's mean latency and conditional/plain, the cost of the check (the version is
// compared on the row the update reads locked anyway, so about 1 is expected).
//
// Run: go test -run '^$' -bench ConditionalPatch ./internal/risks/riskhttp/ (and with
// TEST_DATABASE_URL=postgres://… for PostgreSQL).
func BenchmarkConditionalPatch(b *testing.B) {
	env := apitest.New(b)
	a := env.Tenant("Bench")
	r := create(env, a.Key, map[string]any{"title": "t"})
	path := "/v2/risks/" + r.ID
	var plain, conditional time.Duration
	version := 1
	timed := func(d *time.Duration, req apitest.Request) {
		start := time.Now()
		res := env.Do(req)
		*d += time.Since(start)
		if res.Code != http.StatusOK {
			b.Fatalf("%d %s", res.Code, res.Body)
		}
		version++
	}
	for i := 0; b.Loop(); i++ {
		timed(&plain, apitest.Request{Method: http.MethodPatch, Path: path, Bearer: a.Key, Body: fmt.Sprintf(`{"title":"p%d"}`, i)})
		timed(&conditional, apitest.Request{Method: http.MethodPatch, Path: path, Bearer: a.Key, Body: fmt.Sprintf(`{"title":"c%d"}`, i),
			Header: ifMatch(fmt.Sprintf(`"%d"`, version))})
	}
	n := float64(b.N)
	b.ReportMetric(float64(plain.Nanoseconds())/n, "plain-ns/op")
	b.ReportMetric(float64(conditional.Nanoseconds())/n, "conditional-ns/op")
	b.ReportMetric(float64(conditional)/float64(plain), "conditional/plain")
}
