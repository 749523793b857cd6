package server_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
)

// BenchmarkIdempotencyThroughput measures throughput with concurrent clients — the
// figure the 0.8× goal is about: unkeyed writes, keyed first executions and
// replays, each for a fixed slice of time, alternated over several rounds so that
// noise on this shared machine falls on every kind alike. It reports requests per
// second of each kind and the ratios keyed/unkeyed and replay/keyed.
//
// Run: go test -run '^$' -bench IdempotencyThroughput -benchtime 1x ./internal/server/
func BenchmarkIdempotencyThroughput(b *testing.B) {
	const (
		clients = 16
		rounds  = 4
		slice   = 750 * time.Millisecond
	)
	env := apitest.New(b)
	tenant := env.Tenant("Bench")
	body := map[string]any{"title": "Vendor contract missing a DPA", "category": "Third-Party", "likelihood": 3, "impact": 4}
	var seq atomic.Int64
	newKey := func() http.Header {
		return http.Header{"Idempotency-Key": {fmt.Sprintf("tp-%d-%d", time.Now().UnixNano(), seq.Add(1))}}
	}
	// Keys for replays are made beforehand so replays replay.
	replayKeys := make([]http.Header, 64)
	for i := range replayKeys {
		replayKeys[i] = newKey()
		env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: tenant.Key, JSON: body, Header: replayKeys[i]}).Expect(201)
	}
	meter := cpuMeter{db: env.App.DB}
	cpu := map[string][2]time.Duration{} // per kind: process, database
	count := map[string]int64{}
	run := func(kind string) float64 {
		p0, d0 := meter.read()
		defer func() {
			p1, d1 := meter.read()
			c := cpu[kind]
			cpu[kind] = [2]time.Duration{c[0] + p1 - p0, c[1] + d1 - d0}
		}()
		var done atomic.Int64
		var wg sync.WaitGroup
		stop := time.Now().Add(slice)
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; time.Now().Before(stop); i++ {
					r := apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: tenant.Key, JSON: body}
					want := ""
					switch kind {
					case "keyed":
						r.Header, want = newKey(), "false"
					case "replay":
						r.Header, want = replayKeys[(c*7+i)%len(replayKeys)], "true"
					}
					res := env.Do(r)
					if res.Code != 201 || res.Header().Get("Idempotent-Replayed") != want {
						b.Errorf("%s: %d %s", kind, res.Code, res.Body)
						return
					}
					done.Add(1)
				}
			}()
		}
		wg.Wait()
		count[kind] += done.Load()
		return float64(done.Load()) / slice.Seconds()
	}
	var unkeyed, keyed, replay float64
	for b.Loop() {
		for range rounds {
			unkeyed += run("unkeyed")
			keyed += run("keyed")
			replay += run("replay")
		}
	}
	b.ReportMetric(unkeyed/rounds/float64(b.N), "unkeyed-req/s")
	b.ReportMetric(keyed/rounds/float64(b.N), "keyed-req/s")
	b.ReportMetric(replay/rounds/float64(b.N), "replay-req/s")
	b.ReportMetric(keyed/unkeyed, "keyed/unkeyed")
	b.ReportMetric(replay/keyed, "replay/keyed")
	// CPU per request: the process (server and in-process client) and, on
	// PostgreSQL, the database's backends; ratios against an unkeyed write.
	per := func(kind string, i int) float64 { return float64(cpu[kind][i]) / float64(count[kind]) }
	for _, kind := range []string{"unkeyed", "keyed", "replay"} {
		b.ReportMetric(per(kind, 0)/1e3, kind+"-proc-cpu-us/req")
		b.ReportMetric(per(kind, 1)/1e3, kind+"-db-cpu-us/req")
	}
	b.ReportMetric(per("replay", 0)/per("unkeyed", 0), "replay/unkeyed-proc-cpu")
	b.ReportMetric((per("replay", 0)+per("replay", 1))/(per("unkeyed", 0)+per("unkeyed", 1)), "replay/unkeyed-total-cpu")
	b.ReportMetric((per("keyed", 0)+per("keyed", 1))/(per("unkeyed", 0)+per("unkeyed", 1)), "keyed/unkeyed-total-cpu")
}
