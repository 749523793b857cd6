package eventhttp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/events/webhooktest"
)

// TestOneTenantCannotSlowAnother: tenant A's five endpoints hang (each attempt runs
// into the 10 s timeout) with a hundred deliveries queued; tenant B's deliveries
// still go out at once — their lag's p99 stays under 5 s, half the attempt timeout
// (issue 25, item 6). Before, A's hanging attempts took every slot of the instance
// and B's waited for them, which is 10 s less the 0.3 s head start. The bound is
// loose on purpose: B's own deliveries may queue behind a loaded machine's CPU
// (they took up to 2.2 s under -race at load 19), never behind A's timeouts.
func TestOneTenantCannotSlowAnother(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate)
	start(t, env) // before the receivers: their cleanup cuts the hanging attempts first
	a, b := env.Tenant("Acme"), env.Tenant("Beta")
	ta, tb := login(t, env, a), login(t, env, b)
	for range 5 {
		hang := webhooktest.NewReceiver(t)
		hang.Delay(time.Minute)
		createEndpoint(t, env, ta, hang.URL())
	}
	rb := webhooktest.NewReceiver(t)
	createEndpoint(t, env, tb, rb.URL())
	for range 20 {
		env.Do(apitest.Request{Method: "POST", Path: "/v1/risks", Bearer: ta, JSON: map[string]any{"title": "a"}}).Expect(201)
	}
	time.Sleep(300 * time.Millisecond) // A's attempts are in flight, hanging

	var sent []time.Time
	for range 20 {
		sent = append(sent, time.Now())
		env.Do(apitest.Request{Method: "POST", Path: "/v1/risks", Bearer: tb, JSON: map[string]any{"title": "b"}}).Expect(201)
		time.Sleep(50 * time.Millisecond)
	}
	rb.WaitIDs(t, 20, 15*time.Second)
	ds := rb.Deliveries()
	lags := make([]time.Duration, len(sent))
	for i := range sent {
		lags[i] = ds[i].At.Sub(sent[i])
	}
	slices.Sort(lags)
	if p99 := lags[len(lags)*99/100]; p99 > 5*time.Second {
		t.Errorf("tenant B's delivery lag p99 %s with tenant A's endpoints hanging, want under 5 s (lags %v)", p99, lags)
	}
}

// TestHealthyEndpointBesideHangingOnes: fifteen of tenant A's sixteen endpoints
// hang (real HTTP servers that never answer until the test ends: each attempt runs
// into the 10 s timeout, and is retried), with a backlog of their deliveries
// queued; A's sixteenth endpoint still gets each of 150 events, created one every
// 60 ms over more than one round of the hanging attempts' timeouts, with a lag p50
// under 1 s and p99 under 5 s (docs/events.md; issue 36: p50 50.1 s with 15
// hanging, 19.9 s with 5). At most WEBHOOK_ENDPOINT_CONCURRENCY (2) attempts are
// in flight to any hanging endpoint.
func TestHealthyEndpointBesideHangingOnes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs for 15 s: skipped by -short")
	}
	env := apitest.New(t, allowPrivate)
	start(t, env) // stopped last: the hanging requests are let go first
	a := env.Tenant("Acme")
	ta := login(t, env, a)
	release := make(chan struct{})
	var mu sync.Mutex
	inFlight, most := map[int]int{}, 0
	for i := range 15 {
		hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // read whole, so that the sender hanging up ends r's context
			mu.Lock()
			inFlight[i]++
			most = max(most, inFlight[i])
			mu.Unlock()
			defer func() { mu.Lock(); inFlight[i]--; mu.Unlock() }()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(hang.Close)
		createEndpoint(t, env, ta, hang.URL)
	}
	t.Cleanup(func() { close(release) })
	healthy := webhooktest.NewReceiver(t)
	createEndpoint(t, env, ta, healthy.URL())
	create := func(title string) {
		env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": title}}).Expect(201)
	}
	for i := range 30 { // a backlog for the hanging endpoints: 450 deliveries
		create("backlog " + strconv.Itoa(i))
	}
	const n = 150
	sent := map[string]time.Time{}
	for i := range n {
		title := "measured " + strconv.Itoa(i)
		sent[title] = time.Now()
		create(title)
		time.Sleep(60 * time.Millisecond)
	}
	healthy.WaitIDs(t, 30+n, 30*time.Second)
	var lags []time.Duration
	for _, d := range healthy.Deliveries() {
		var ev struct {
			Data struct{ Object struct{ Title string } }
		}
		if err := json.Unmarshal(d.Body, &ev); err != nil {
			t.Fatal(err)
		}
		if at, ok := sent[ev.Data.Object.Title]; ok {
			lags = append(lags, d.At.Sub(at))
			delete(sent, ev.Data.Object.Title)
		}
	}
	if len(lags) != n {
		t.Fatalf("%d of %d measured events reached the healthy endpoint", len(lags), n)
	}
	slices.Sort(lags)
	p50, p99 := lags[n/2], lags[n*99/100]
	t.Logf("healthy endpoint beside 15 hanging ones: lag p50 %s, p99 %s, max %s over %d events", p50, p99, lags[n-1], n)
	if p50 >= time.Second || p99 >= 5*time.Second {
		t.Errorf("lag p50 %s, p99 %s; want under 1 s and 5 s", p50, p99)
	}
	mu.Lock()
	defer mu.Unlock()
	if most > 2 {
		t.Errorf("%d attempts in flight at once to one hanging endpoint, want at most WEBHOOK_ENDPOINT_CONCURRENCY (2)", most)
	}
}
