package server_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
)

// BenchmarkIdempotency measures, in one run and interleaved so that machine noise
// hits every kind alike, three writes through the whole router on the store under
// test: an unkeyed create, a keyed create (first execution) and the replay of that
// keyed create. It reports each kind's mean latency and the ratios the issue sets
// goals for:
//
//	keyed/unkeyed    throughput of keyed first executions relative to unkeyed writes (goal ≥ 0.8 on PostgreSQL)
//	replay-speedup   how many times faster a replay is than a first execution (goal ≥ 2)
//
// Run: go test -run '^$' -bench Idempotency ./internal/server/ (and again with
// TEST_DATABASE_URL=postgres://… for PostgreSQL).
func BenchmarkIdempotency(b *testing.B) {
	env := apitest.New(b)
	tenant := env.Tenant("Bench")
	body := map[string]any{"title": "Vendor contract missing a DPA", "category": "Third-Party", "likelihood": 3, "impact": 4}
	var unkeyed, keyed, replay time.Duration
	timed := func(d *time.Duration, r apitest.Request, want string) {
		start := time.Now()
		res := env.Do(r)
		*d += time.Since(start)
		if res.Code != http.StatusCreated || res.Header().Get("Idempotent-Replayed") != want {
			b.Fatalf("%d %q %s", res.Code, res.Header().Get("Idempotent-Replayed"), res.Body)
		}
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		timed(&unkeyed, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: tenant.Key, JSON: body}, "")
		key := http.Header{"Idempotency-Key": {fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), i)}}
		timed(&keyed, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: tenant.Key, JSON: body, Header: key}, "false")
		timed(&replay, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: tenant.Key, JSON: body, Header: key}, "true")
	}
	n := float64(b.N)
	b.ReportMetric(float64(unkeyed.Nanoseconds())/n, "unkeyed-ns/op")
	b.ReportMetric(float64(keyed.Nanoseconds())/n, "keyed-ns/op")
	b.ReportMetric(float64(replay.Nanoseconds())/n, "replay-ns/op")
	b.ReportMetric(float64(unkeyed)/float64(keyed), "keyed/unkeyed")
	b.ReportMetric(float64(keyed)/float64(replay), "replay-speedup")
}
