package server_test

import (
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/events/webhooktest"
)

// TestLifecycleResponsesMatchSpec sends the lifecycle routes of keys and endpoints
// (contract section 19) through the router and validates each answer against
// docs/openapi.yaml: a key created with expiresAt and allowedCidrs and rolled, an
// endpoint's ping (delivered and failed), disable and enable, its deliveries with a
// skipped one, roll-secret, and the webhook_endpoint.disabled event listed.
func TestLifecycleResponsesMatchSpec(t *testing.T) {
	t.Parallel()
	s := newSpecChecker(t)
	env := apitest.New(t, func(c *config.Config) { c.Outbound.AllowPrivate = true })
	a := env.Tenant("Acme")
	tok := apitest.Login(t, env, a).Token
	rcv := webhooktest.NewReceiver(t)

	var k struct{ ID string }
	s.run(t, env, exchange{"key with lifecycle", apitest.Request{Method: "POST", Path: "/v1/api-keys", Bearer: tok,
		JSON: map[string]any{"name": "ci", "scopes": []string{"risks:read"}, "expiresAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
			"allowedCidrs": []string{"203.0.113.0/24"}}}, 201}).Decode(&k)
	var ep struct{ ID string }
	s.run(t, env, exchange{"endpoint", apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints", Bearer: tok,
		JSON: map[string]any{"url": rcv.URL() + "/hook", "events": []string{"risk.created"}}}, 201}).Decode(&ep)
	e := "/v1/webhook-endpoints/" + ep.ID
	for _, x := range []exchange{
		{"key roll", apitest.Request{Method: "POST", Path: "/v1/api-keys/" + k.ID + "/roll", Bearer: tok, JSON: map[string]any{"expiresIn": 60}}, 201},
		{"key roll again", apitest.Request{Method: "POST", Path: "/v1/api-keys/" + k.ID + "/roll", Bearer: tok, JSON: map[string]any{"expiresIn": 60}}, 400},
		{"key list", apitest.Request{Method: "GET", Path: "/v1/api-keys", Bearer: tok}, 200},
		{"ping", apitest.Request{Method: "POST", Path: e + "/ping", Bearer: tok}, 200},
		{"disable", apitest.Request{Method: "POST", Path: e + "/disable", Bearer: tok}, 200},
		{"risk while disabled", apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "t"}}, 201},
		{"enable", apitest.Request{Method: "POST", Path: e + "/enable", Bearer: tok}, 200},
		{"roll-secret", apitest.Request{Method: "POST", Path: e + "/roll-secret", Bearer: tok, JSON: map[string]any{"expiresIn": 60}}, 200},
		{"endpoint", apitest.Request{Method: "GET", Path: e, Bearer: tok}, 200},
		{"patch", apitest.Request{Method: "PATCH", Path: e, Bearer: tok, JSON: map[string]any{"description": "d"}}, 200},
	} {
		s.run(t, env, x)
	}
	// The event of the risk made while disabled is logged as skipped (off the request's path).
	deadline := time.Now().Add(5 * time.Second)
	for {
		res := s.run(t, env, exchange{"deliveries", apitest.Request{Method: "GET", Path: e + "/deliveries", Bearer: tok}, 200})
		var page struct{ Data []struct{ Outcome string } }
		res.Decode(&page)
		if len(page.Data) > 0 && page.Data[0].Outcome == "skipped" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries %+v, want the skipped one", page.Data)
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.run(t, env, exchange{"disabled event", apitest.Request{Method: "GET", Path: "/v2/events?type=webhook_endpoint.disabled", Bearer: a.Key}, 200})
	rcv.Answer(func(int, webhooktest.Delivery) int { return 503 })
	s.run(t, env, exchange{"failed ping", apitest.Request{Method: "POST", Path: e + "/ping", Bearer: tok}, 200})
}
