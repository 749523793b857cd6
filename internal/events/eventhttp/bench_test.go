package eventhttp_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/events/webhooktest"
)

// BenchmarkEventDelivery measures what an outbound webhook costs the writes that
// emit to it: keyed creates by 16 clients for a tenant with one subscribed endpoint
// (a real receiver on loopback, delivered by the running worker) against a tenant
// with none, alternated in slices over several rounds so that the machine's noise
// falls on both alike; the endpoint's backlog is drained before each no-endpoint
// slice, and what was still undelivered when a slice ended is reported as a share of
// its writes. It reports the throughput ratio with/without an endpoint, and
// the delivery lag (event committed → receiver got it) at p50 and p99, also as
// multiples of the median keyed write latency measured in the same run.
//
// Run: go test -run '^$' -bench EventDelivery -benchtime 1x ./internal/events/eventhttp/
// (TEST_DATABASE_URL=postgres://… for PostgreSQL). On SQLite with -tags writegatestats
// it also reports lock-floor: the write lock's time per write without an endpoint ÷
// with one, its deliveries' claims and outcomes included, the ratio's floor.
func BenchmarkEventDelivery(b *testing.B) {
	const (
		clients = 16
		rounds  = 8
		slice   = time.Second
	)
	env := apitest.New(b, allowPrivate)
	plain, hooked := env.Tenant("Plain"), env.Tenant("Hooked")
	rcv := webhooktest.NewReceiver(b)
	createEndpoint(b, env, login(b, env, hooked), rcv.URL())
	start(b, env)
	body := map[string]any{"title": "Vendor contract missing a DPA", "category": "Third-Party", "likelihood": 3, "impact": 4}
	var seq atomic.Int64
	var latMu sync.Mutex
	var writeLat []time.Duration
	run := func(key string) float64 {
		var done atomic.Int64
		var wg sync.WaitGroup
		stop := time.Now().Add(slice)
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(stop) {
					h := http.Header{"Idempotency-Key": {fmt.Sprintf("ev-%d-%d", time.Now().UnixNano(), seq.Add(1))}}
					t0 := time.Now()
					res := env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: key, JSON: body, Header: h})
					if res.Code != 201 {
						b.Errorf("%d %s", res.Code, res.Body)
						return
					}
					latMu.Lock()
					writeLat = append(writeLat, time.Since(t0))
					latMu.Unlock()
					done.Add(1)
				}
			}()
		}
		wg.Wait()
		return float64(done.Load()) / slice.Seconds()
	}
	var none, one, backlog float64
	var hookedWrites int
	// The write lock's holds during the no-endpoint slices; every other hold
	// (the hooked writes and all their deliveries) is the endpoint's side.
	var lockNone time.Duration
	_, lock0 := database.WriteGateHolds()
	runNone := func() {
		// The endpoint's deliveries are drained first, so that the no-endpoint
		// slice pays for none of them.
		rcv.WaitIDs(b, hookedWrites, 2*time.Minute)
		_, l0 := database.WriteGateHolds()
		none += run(plain.Key)
		_, l1 := database.WriteGateHolds()
		lockNone += l1 - l0
	}
	runOne := func() {
		n := run(hooked.Key)
		one += n
		written := int(n*slice.Seconds() + 0.5)
		hookedWrites += written
		backlog += float64(hookedWrites-len(rcv.IDs())) / float64(written)
	}
	for b.Loop() {
		// ABBA: whichever kind runs second in a round is slower on this machine
		// (measured: 0.76 vs 1.04 by order alone), so the order alternates.
		for i := range rounds {
			if i%2 == 0 {
				runNone()
				runOne()
			} else {
				runOne()
				runNone()
			}
		}
	}
	// Every hooked write's event must arrive; the lag is measured on all of them.
	rcv.WaitIDs(b, hookedWrites, 2*time.Minute)
	if _, l := database.WriteGateHolds(); database.WriteGateStats && l > lock0 {
		time.Sleep(200 * time.Millisecond) // the last deliveries' outcomes are written after the receiver answers
		_, l = database.WriteGateHolds()
		noneWrites := none * slice.Seconds()
		perNone := lockNone.Seconds() / noneWrites
		perOne := (l - lock0 - lockNone).Seconds() / float64(hookedWrites)
		b.ReportMetric(perNone*1e6, "lock-µs/write-none")
		b.ReportMetric(perOne*1e6, "lock-µs/write-one")
		b.ReportMetric(perNone/perOne, "lock-floor")
	}
	var lag []time.Duration
	for _, d := range rcv.Deliveries() {
		var e struct{ CreatedAt time.Time }
		if err := json.Unmarshal(d.Body, &e); err != nil {
			b.Fatal(err)
		}
		lag = append(lag, d.At.Sub(e.CreatedAt))
	}
	slices.Sort(lag)
	slices.Sort(writeLat)
	pct := func(ds []time.Duration, p float64) time.Duration { return ds[int(p*float64(len(ds)-1))] }
	w50 := pct(writeLat, 0.5)
	b.ReportMetric(none/rounds/float64(b.N), "no-endpoint-req/s")
	b.ReportMetric(one/rounds/float64(b.N), "one-endpoint-req/s")
	b.ReportMetric(one/none, "one/none")
	// The share of a slice's events not yet delivered when its writes stopped.
	b.ReportMetric(backlog/rounds/float64(b.N), "backlog-at-end")
	b.ReportMetric(float64(pct(lag, 0.5).Microseconds())/1000, "lag-p50-ms")
	b.ReportMetric(float64(pct(lag, 0.99).Microseconds())/1000, "lag-p99-ms")
	b.ReportMetric(float64(pct(lag, 0.5))/float64(w50), "lag-p50/write-p50")
	b.ReportMetric(float64(pct(lag, 0.99))/float64(w50), "lag-p99/write-p50")
}
