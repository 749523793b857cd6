package eventhttp_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/apiversion"
	"github.com/riskapi/riskapi/internal/events/webhooktest"
)

// TestEachEndpointReceivesItsVersion: two endpoints of one tenant, one created in
// the tenant's pin (2026-12-01) and one naming 2027-01-15, receive the same
// risk.created each in its own shape: the owner a string, and an object.
func TestEachEndpointReceivesItsVersion(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate)
	a := env.Tenant("Acme")
	tok := login(t, env, a)
	oldRcv, newRcv := webhooktest.NewReceiver(t), webhooktest.NewReceiver(t)
	old := createEndpoint(t, env, tok, oldRcv.URL()+"/old", "risk.created")
	var created map[string]any
	env.Do(apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints", Bearer: tok,
		JSON: map[string]any{"url": newRcv.URL() + "/new", "events": []string{"risk.created"}, "apiVersion": "2027-01-15"}}).
		Expect(http.StatusCreated).Decode(&created)
	if created["apiVersion"] != "2027-01-15" {
		t.Errorf("endpoint created with %v", created["apiVersion"])
	}
	var listed struct{ Data []map[string]any }
	env.Do(apitest.Request{Method: "GET", Path: "/v1/webhook-endpoints", Bearer: tok}).Expect(http.StatusOK).Decode(&listed)
	for _, e := range listed.Data {
		if e["id"] == old.ID && e["apiVersion"] != "2026-12-01" {
			t.Errorf("an endpoint created without apiVersion has %v, want the pin", e["apiVersion"])
		}
	}
	env.Do(apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints", Bearer: tok,
		JSON: map[string]any{"url": newRcv.URL() + "/x", "apiVersion": "2020-01-01"}}).
		ExpectProblem(http.StatusBadRequest, "API_VERSION_UNKNOWN")
	start(t, env)

	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key,
		Header: http.Header{apiversion.Header: {"2027-01-15"}},
		JSON:   map[string]any{"title": "DPA", "owner": map[string]any{"name": "ann"}}}).Expect(http.StatusCreated)
	oldRcv.WaitIDs(t, 1, 10*time.Second)
	newRcv.WaitIDs(t, 1, 10*time.Second)
	owner := func(r *webhooktest.Receiver) any {
		var ev struct {
			Data struct{ Object map[string]any }
		}
		if err := json.Unmarshal(r.Deliveries()[0].Body, &ev); err != nil {
			t.Fatal(err)
		}
		return ev.Data.Object["owner"]
	}
	if got := owner(oldRcv); got != "ann" {
		t.Errorf("2026-12-01 endpoint received owner %v, want \"ann\"", got)
	}
	if got, _ := owner(newRcv).(map[string]any); got == nil || got["name"] != "ann" || got["userId"] != nil {
		t.Errorf("2027-01-15 endpoint received owner %v, want a name owner", owner(newRcv))
	}
}

// TestPatchMovesAnEndpointsVersion: PATCH's apiVersion renders the endpoint's next
// deliveries in that version (docs/api-versions.md); an unknown one is refused and
// changes nothing.
func TestPatchMovesAnEndpointsVersion(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate)
	a := env.Tenant("Acme")
	tok := login(t, env, a)
	rcv := webhooktest.NewReceiver(t)
	ep := createEndpoint(t, env, tok, rcv.URL()+"/hook", "risk.created")
	env.Do(apitest.Request{Method: "PATCH", Path: "/v1/webhook-endpoints/" + ep.ID, Bearer: tok,
		JSON: map[string]any{"apiVersion": "2020-01-01"}}).ExpectProblem(http.StatusBadRequest, "API_VERSION_UNKNOWN")
	var got map[string]any
	env.Do(apitest.Request{Method: "PATCH", Path: "/v1/webhook-endpoints/" + ep.ID, Bearer: tok,
		JSON: map[string]any{"apiVersion": "2027-01-15"}}).Expect(http.StatusOK).Decode(&got)
	if got["apiVersion"] != "2027-01-15" {
		t.Fatalf("after PATCH the endpoint has %v", got["apiVersion"])
	}
	start(t, env)
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key,
		JSON: map[string]any{"title": "DPA", "owner": "ann"}}).Expect(http.StatusCreated)
	rcv.WaitIDs(t, 1, 10*time.Second)
	var ev struct {
		Data struct{ Object map[string]any }
	}
	if err := json.Unmarshal(rcv.Deliveries()[0].Body, &ev); err != nil {
		t.Fatal(err)
	}
	if o, _ := ev.Data.Object["owner"].(map[string]any); o == nil || o["name"] != "ann" {
		t.Errorf("the moved endpoint received owner %v, want the 2027-01-15 object", ev.Data.Object["owner"])
	}
}
