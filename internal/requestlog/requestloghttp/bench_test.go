package requestloghttp_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/app"
)

// BenchmarkRequestLogThroughput measures what the request log costs writers: keyed
// and unkeyed creates from 16 concurrent clients against one server on a fresh
// database of the store under test, with the log on and off by turns (two servers
// differed by up to 30% with the log on in both). The four kinds run in turns of a
// fixed slice of time, their order rotated every round, so that noise on this shared
// machine falls on all of them alike; a log-on slice ends when its entries are
// stored, so the background inserts count against it. It reports requests per second of each and
// the ratios log-on/log-off (the goal: at least 0.95).
//
// Run (one run, both stores — docs/performance.md):
//
//	go test -run '^$' -bench RequestLogThroughput -benchtime 1x ./internal/requestlog/requestloghttp/
//	TEST_DATABASE_URL=postgres://… go test -run '^$' -bench RequestLogThroughput -benchtime 1x ./internal/requestlog/requestloghttp/
func BenchmarkRequestLogThroughput(b *testing.B) {
	const (
		clients = 16
		rounds  = 6
		slice   = time.Second
	)
	var logOff atomic.Bool
	env := apitest.NewWith(b, app.Options{RequestLogSkipper: func(echo.Context) bool { return logOff.Load() }})
	tenant := env.Tenant("Bench")
	body := map[string]any{"title": "Vendor contract missing a DPA", "category": "Third-Party", "likelihood": 3, "impact": 4}
	var seq atomic.Int64
	run := func(logged, keyed bool) float64 {
		logOff.Store(!logged)
		var done atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		stop := start.Add(slice)
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(stop) {
					r := apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: tenant.Key, JSON: body}
					if keyed {
						r.Header = http.Header{"Idempotency-Key": {fmt.Sprintf("bench-key-%08d", seq.Add(1))}}
					}
					if res := env.Do(r); res.Code != http.StatusCreated {
						b.Errorf("%d %s", res.Code, res.Body)
						return
					}
					done.Add(1)
				}
			}()
		}
		wg.Wait()
		// The log's batches are written behind the requests: they count against the
		// slice that logged them, not the next one.
		if err := env.App.RequestLog.Flush(context.Background()); err != nil {
			b.Fatal(err)
		}
		return float64(done.Load()) / time.Since(start).Seconds()
	}
	type kind struct {
		logged, keyed bool
		total         float64
	}
	kinds := []*kind{{logged: true}, {}, {logged: true, keyed: true}, {keyed: true}}
	for b.Loop() {
		for r := range rounds {
			for i := range kinds {
				k := kinds[(i+r)%len(kinds)]
				k.total += run(k.logged, k.keyed)
			}
		}
	}
	per := func(k *kind) float64 { return k.total / rounds / float64(b.N) }
	b.ReportMetric(per(kinds[0]), "unkeyed-on-req/s")
	b.ReportMetric(per(kinds[1]), "unkeyed-off-req/s")
	b.ReportMetric(per(kinds[2]), "keyed-on-req/s")
	b.ReportMetric(per(kinds[3]), "keyed-off-req/s")
	b.ReportMetric(kinds[0].total/kinds[1].total, "unkeyed-on/off")
	b.ReportMetric(kinds[2].total/kinds[3].total, "keyed-on/off")
}
