package eventhttp_test

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/ids"
)

// TestEndpointAndRedeliveryLimits: a tenant has at most WEBHOOK_ENDPOINTS_MAX (16)
// endpoints — the 17th is 400 — and an event is redelivered at most once a minute:
// the second redelivery within the minute is 429 with Retry-After, whatever
// RATE_LIMIT_RPS says (issue 25, item 6: 120 endpoints were accepted, and 10
// redeliveries made 1,250 POSTs). Another event, or another tenant, is not held up.
func TestEndpointAndRedeliveryLimits(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate)
	a := env.Tenant("Acme")
	tok := login(t, env, a)
	for i := range 16 {
		createEndpoint(t, env, tok, "http://127.0.0.1:9/"+strconv.Itoa(i))
	}
	env.Do(apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints", Bearer: tok,
		JSON: map[string]any{"url": "http://127.0.0.1:9/16"}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")

	env.Do(apitest.Request{Method: "POST", Path: "/v1/risks", Bearer: tok, JSON: map[string]any{"title": "one"}}).Expect(201)
	env.Do(apitest.Request{Method: "POST", Path: "/v1/risks", Bearer: tok, JSON: map[string]any{"title": "two"}}).Expect(201)
	evs := listEvents(t, env, a.Key, "")
	redeliver := func(id string) *apitest.Response {
		return env.Do(apitest.Request{Method: "POST", Path: "/v1/events/" + id + "/redeliver", Bearer: tok})
	}
	redeliver(evs[0].ID).Expect(http.StatusAccepted)
	res := redeliver(evs[0].ID)
	res.ExpectProblem(http.StatusTooManyRequests, "RATE_LIMITED")
	if ra, _ := strconv.Atoi(res.Header().Get("Retry-After")); ra < 1 || ra > 60 {
		t.Errorf("Retry-After %q, want the rest of the minute", res.Header().Get("Retry-After"))
	}
	redeliver(evs[1].ID).Expect(http.StatusAccepted)
}

// TestRedeliveriesPerTenant: a tenant's 51 redeliveries of 51 events in a burst
// (issue 36: they queued 816 deliveries) — ten are accepted and the rest are 429
// RATE_LIMITED with Retry-After, at most 10 a minute per tenant; each event's
// once-a-minute rule refuses a repeat without spending the tenant's quota, and
// another tenant's redelivery is accepted.
func TestRedeliveriesPerTenant(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate)
	a, b := env.Tenant("Acme"), env.Tenant("Beta")
	ta, tb := login(t, env, a), login(t, env, b)
	createEndpoint(t, env, ta, "http://127.0.0.1:9/a")
	createEndpoint(t, env, tb, "http://127.0.0.1:9/b")
	for i := range 51 {
		env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "r" + strconv.Itoa(i)}}).Expect(201)
	}
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: b.Key, JSON: map[string]any{"title": "b"}}).Expect(201)
	var ids []string
	for cursor := ""; ; {
		var page struct {
			Data       []event
			NextCursor string
		}
		env.Do(apitest.Request{Method: "GET", Path: "/v2/events?limit=100" + cursor, Bearer: a.Key}).Expect(200).Decode(&page)
		for _, e := range page.Data {
			ids = append(ids, e.ID)
		}
		if page.NextCursor == "" {
			break
		}
		cursor = "&cursor=" + page.NextCursor
	}
	if len(ids) != 51 {
		t.Fatalf("%d events of tenant A, want 51", len(ids))
	}
	redeliver := func(tok, id string) *apitest.Response {
		return env.Do(apitest.Request{Method: "POST", Path: "/v1/events/" + id + "/redeliver", Bearer: tok})
	}
	began := time.Now()
	redeliver(ta, ids[0]).Expect(http.StatusAccepted)
	redeliver(ta, ids[0]).ExpectProblem(http.StatusTooManyRequests, "RATE_LIMITED") // the event's own rule
	accepted := 1
	for _, id := range ids[1:] {
		switch res := redeliver(ta, id); res.Code {
		case http.StatusAccepted:
			accepted++
		case http.StatusTooManyRequests:
			res.ExpectProblem(http.StatusTooManyRequests, "RATE_LIMITED")
			if ra, _ := strconv.Atoi(res.Header().Get("Retry-After")); ra < 1 || ra > 60 {
				t.Errorf("Retry-After %q, want at most a minute", res.Header().Get("Retry-After"))
			}
		default:
			t.Fatalf("redelivery: %d, want 202 or 429", res.Code)
		}
	}
	// one more every 6 s: a slow machine may have taken that long over the burst
	if refilled := int(time.Since(began) / (6 * time.Second)); accepted < 10 || accepted > 10+refilled {
		t.Errorf("%d of 51 redeliveries in a burst accepted, want 10 (+%d refilled)", accepted, refilled)
	}
	evs := listEvents(t, env, b.Key, "")
	redeliver(tb, evs[0].ID).Expect(http.StatusAccepted)
}

// TestEndpointLimitHoldsUnderConcurrentCreates: creates racing for a tenant's
// last free endpoint slots never take it past WEBHOOK_ENDPOINTS_MAX — each create
// counts and inserts under the tenant's endpoint lock — and the losers get 400.
// Three tenants race at once, so that an unlocked count is caught in one run.
func TestEndpointLimitHoldsUnderConcurrentCreates(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate)
	const tenants, taken, racers = 3, 14, 24
	toks := make([]string, tenants)
	for n := range toks {
		toks[n] = login(t, env, env.Tenant("Acme"+strconv.Itoa(n)))
		for i := range taken {
			createEndpoint(t, env, toks[n], "http://127.0.0.1:9/"+strconv.Itoa(i))
		}
	}
	codes := make([][racers]int, tenants)
	var wg sync.WaitGroup
	for n, tok := range toks {
		for i := range racers {
			wg.Go(func() {
				res := env.Do(apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints", Bearer: tok,
					JSON: map[string]any{"url": "http://127.0.0.1:9/race" + strconv.Itoa(i)}})
				codes[n][i] = res.Code
			})
		}
	}
	wg.Wait()
	for n, tok := range toks {
		created := 0
		for i, c := range codes[n] {
			switch c {
			case http.StatusCreated:
				created++
			case http.StatusBadRequest:
			default:
				t.Errorf("tenant %d, racer %d: status %d, want 201 or 400", n, i, c)
			}
		}
		if created != 16-taken {
			t.Errorf("tenant %d: %d of %d racing creates succeeded, want the %d free slots", n, created, racers, 16-taken)
		}
		if got := len(listEndpoints(t, env, tok)); got != 16 {
			t.Errorf("tenant %d has %d endpoints, want WEBHOOK_ENDPOINTS_MAX (16)", n, got)
		}
	}
}

// TestRedeliveryOfAnUnknownEventSpendsNoQuota: redeliveries of events the tenant
// does not have (well-formed ids of no event, another tenant's event) are 404 and
// spend none of the tenant's ten a minute: its ten redeliveries of real events
// after them are all accepted.
func TestRedeliveryOfAnUnknownEventSpendsNoQuota(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate)
	a, b := env.Tenant("Acme"), env.Tenant("Beta")
	ta := login(t, env, a)
	createEndpoint(t, env, ta, "http://127.0.0.1:9/a")
	for i := range 10 {
		env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "r" + strconv.Itoa(i)}}).Expect(201)
	}
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: b.Key, JSON: map[string]any{"title": "b"}}).Expect(201)
	theirs := listEvents(t, env, b.Key, "")[0].ID
	redeliver := func(id string) *apitest.Response {
		return env.Do(apitest.Request{Method: "POST", Path: "/v1/events/" + id + "/redeliver", Bearer: ta})
	}
	for i := range 20 {
		redeliver(ids.New(ids.Event)).ExpectProblem(http.StatusNotFound, "NOT_FOUND")
		if i%2 == 0 {
			redeliver(theirs).ExpectProblem(http.StatusNotFound, "NOT_FOUND")
		}
	}
	for _, e := range listEvents(t, env, a.Key, "") {
		redeliver(e.ID).Expect(http.StatusAccepted)
	}
}
