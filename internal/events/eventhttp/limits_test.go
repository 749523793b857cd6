package eventhttp_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
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
