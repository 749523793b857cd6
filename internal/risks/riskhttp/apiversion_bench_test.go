package riskhttp_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/apiversion"
)

// BenchmarkVersionRendering measures, interleaved in one run so that machine noise
// hits both alike, the same request answered in the newest version (no transform)
// and in 2026-12-01 (the owner change applied to the body and the answer): a page of
// 100 risks, one risk, and a PATCH. It reports each one's mean latency and
// old/newest, the cost of version rendering (goal ≤ 1.05, docs/performance.md),
// and the ratio of the median CPU time each took.
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
	// timed records a request's wall time and the process's CPU time in it (the
	// request runs on this goroutine; the CPU of other processes on the shared
	// vCPUs is not in it).
	timed := func(t *timings, req apitest.Request) {
		var c0, c1 unix.Timespec
		unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &c0)
		start := time.Now()
		res := env.Do(req)
		t.wall = append(t.wall, time.Since(start))
		unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &c1)
		t.cpu = append(t.cpu, time.Duration(c1.Nano()-c0.Nano()))
		if res.Code != http.StatusOK {
			b.Fatalf("%d %s", res.Code, res.Body)
		}
	}
	// pairs times the two requests of each round in a random order: the second of
	// a pair ran up to a third faster than the first, and in turns, work done every
	// so many requests fell on one side.
	pairs := func(b *testing.B, newestReq, oldReq func(i int) apitest.Request) {
		var plain, rendered timings
		for i := 0; b.Loop(); i++ {
			if rand.IntN(2) == 0 {
				timed(&plain, newestReq(i))
				timed(&rendered, oldReq(i))
			} else {
				timed(&rendered, oldReq(i))
				timed(&plain, newestReq(i))
			}
		}
		reportRendering(b, plain, rendered)
	}
	get := func(path string, h http.Header) func(int) apitest.Request {
		return func(int) apitest.Request {
			return apitest.Request{Method: http.MethodGet, Path: path, Bearer: a.Key, Header: h}
		}
	}
	b.Run("list", func(b *testing.B) {
		pairs(b, get("/v2/risks?limit=100", newest), get("/v2/risks?limit=100", old))
	})
	b.Run("get", func(b *testing.B) {
		pairs(b, get("/v2/risks/"+id, newest), get("/v2/risks/"+id, old))
	})
	b.Run("write", func(b *testing.B) {
		pairs(b, func(i int) apitest.Request {
			return apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + id, Bearer: a.Key, Header: newest,
				Body: fmt.Sprintf(`{"title":"p%d","owner":{"name":"ann"}}`, i)}
		}, func(i int) apitest.Request {
			return apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + id, Bearer: a.Key, Header: old,
				Body: fmt.Sprintf(`{"title":"o%d","owner":"ann"}`, i)}
		})
	})
}

// timings are one version's requests' wall and CPU times.
type timings struct{ wall, cpu []time.Duration }

// reportRendering reports each version's mean latency and old/newest, their ratio;
// and the ratio of the medians of the CPU time, which the other processes on the
// shared vCPUs do not move (docs/performance.md).
func reportRendering(b *testing.B, plain, rendered timings) {
	mean := func(ds []time.Duration) float64 {
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		return float64(sum.Nanoseconds()) / float64(len(ds))
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Nanoseconds())
	}
	b.ReportMetric(mean(plain.wall), "newest-ns/op")
	b.ReportMetric(mean(rendered.wall), "old-ns/op")
	b.ReportMetric(mean(rendered.wall)/mean(plain.wall), "old/newest")
	b.ReportMetric(median(rendered.cpu)/median(plain.cpu), "cpu-old/newest")
}
