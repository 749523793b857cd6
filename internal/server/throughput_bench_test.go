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
	run := func(kind string) float64 {
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
}
