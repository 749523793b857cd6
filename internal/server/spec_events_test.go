package server_test

import (
	"context"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/tenants"
)

// TestEventResponsesMatchSpec sends the event and webhook-endpoint routes' main
// exchanges through the router and validates each response against
// docs/openapi.yaml.
func TestEventResponsesMatchSpec(t *testing.T) {
	t.Parallel()
	s := newSpecChecker(t)
	env := apitest.New(t)
	a, b := env.Tenant("Acme"), env.Tenant("Globex")
	tok, tokB := apitest.Login(t, env, a).Token, apitest.Login(t, env, b).Token
	_, risksOnly, err := env.App.Tenants.CreateAPIKey(context.Background(), a.ID, "old",
		[]tenants.Scope{tenants.ScopeRisksRead, tenants.ScopeRisksWrite})
	if err != nil {
		t.Fatal(err)
	}
	var r struct{ ID string }
	apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Header: key("spec-event-1"),
		JSON: map[string]any{"title": "t"}}).Expect(201).Decode(&r)
	apitest.Do(t, env, apitest.Request{Method: "PATCH", Path: "/v2/risks/" + r.ID, Bearer: a.Key, JSON: map[string]any{"impact": 3}}).Expect(200)
	var page struct{ Data []struct{ ID string } }
	apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/events", Bearer: a.Key}).Expect(200).Decode(&page)
	ev := page.Data[0].ID
	var ep struct{ ID string }
	s.run(t, env, exchange{"endpoint create", apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints", Bearer: tok,
		JSON: map[string]any{"url": "https://93.184.216.34/hook", "events": []string{"risk.created"}}}, 201}).Decode(&ep)
	missingEvent, missingEp := "evt_0193b2c4d5e67f8091a2b3c4d5e6f708", "we_0193b2c4d5e67f8091a2b3c4d5e6f708"
	xs := []exchange{
		{"endpoint private", apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints", Bearer: tok, JSON: map[string]any{"url": "http://10.0.0.1/x"}}, 400},
		{"endpoint keyed", apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints", Bearer: tok, Header: key("spec-endpoint-1"),
			JSON: map[string]any{"url": "https://93.184.216.34/hook"}}, 422},
		{"endpoint unauthenticated", apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints", JSON: map[string]any{"url": "https://93.184.216.34/x"}}, 401},
		{"endpoint list", apitest.Request{Method: "GET", Path: "/v1/webhook-endpoints", Bearer: tok}, 200},
		{"deliveries", apitest.Request{Method: "GET", Path: "/v1/webhook-endpoints/" + ep.ID + "/deliveries", Bearer: tok}, 200},
		{"deliveries bad cursor", apitest.Request{Method: "GET", Path: "/v1/webhook-endpoints/" + ep.ID + "/deliveries?cursor=x", Bearer: tok}, 400},
		{"deliveries other tenant", apitest.Request{Method: "GET", Path: "/v1/webhook-endpoints/" + ep.ID + "/deliveries", Bearer: tokB}, 404},
		{"redeliver", apitest.Request{Method: "POST", Path: "/v1/events/" + ev + "/redeliver", Bearer: tok}, 202},
		{"redeliver absent", apitest.Request{Method: "POST", Path: "/v1/events/" + missingEvent + "/redeliver", Bearer: tok}, 404},
		{"endpoint delete absent", apitest.Request{Method: "DELETE", Path: "/v1/webhook-endpoints/" + missingEp, Bearer: tok}, 404},
		{"endpoint delete", apitest.Request{Method: "DELETE", Path: "/v1/webhook-endpoints/" + ep.ID, Bearer: tok}, 204},
		{"v2 events scope", apitest.Request{Method: "GET", Path: "/v2/events", Bearer: risksOnly}, 403},
		{"v2 event scope", apitest.Request{Method: "GET", Path: "/v2/events/" + ev, Bearer: risksOnly}, 403},
	}
	for _, v := range []struct{ prefix, bearer string }{{"/v1", tok}, {"/v2", a.Key}} {
		p, bb := v.prefix, v.bearer
		xs = append(xs,
			exchange{p + " events", apitest.Request{Method: "GET", Path: p + "/events", Bearer: bb}, 200},
			exchange{p + " events page", apitest.Request{Method: "GET", Path: p + "/events?limit=1&type=risk.created", Bearer: bb}, 200},
			exchange{p + " events bad type", apitest.Request{Method: "GET", Path: p + "/events?type=nope", Bearer: bb}, 400},
			exchange{p + " events unauthenticated", apitest.Request{Method: "GET", Path: p + "/events"}, 401},
			exchange{p + " event", apitest.Request{Method: "GET", Path: p + "/events/" + ev, Bearer: bb}, 200},
			exchange{p + " event absent", apitest.Request{Method: "GET", Path: p + "/events/" + missingEvent, Bearer: bb}, 404},
		)
	}
	for _, x := range xs {
		s.run(t, env, x)
	}
}
