package followuphttp_test

import (
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/apiversion"
	"github.com/riskapi/riskapi/internal/tenants"
)

// TestGetActionAndAcceptance: GET /actions/{id} and /acceptances/{id} answer the
// object with its version as ETag, under /v1 and /v2, the acceptance's
// riskSnapshot in the request's version; another tenant's, the sandbox's from live
// (and the reverse) and a malformed ID are 404.
func TestGetActionAndAcceptance(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.Tenant("Acme"), env.Tenant("Beta")
	owner := env.User(a.ID, tenants.RoleAdmin)
	other := env.User(a.ID, tenants.RoleAdmin)
	newest := http.Header{apiversion.Header: {string(apiversion.V20270115)}}
	oldest := http.Header{apiversion.Header: {string(apiversion.V20261201)}}
	riskID := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, Header: newest,
		JSON: map[string]any{"title": "r", "owner": map[string]any{"userId": owner.ID}}}).Expect(http.StatusCreated).Map()["id"].(string)
	act := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + riskID + "/actions", Bearer: a.Key,
		JSON: map[string]any{"title": "fix", "ownerId": owner.ID}}).Expect(http.StatusCreated).Map()
	env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v2/actions/" + act["id"].(string), Bearer: a.Key,
		JSON: map[string]any{"title": "fix it"}}).Expect(http.StatusOK)
	acc := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/risks/" + riskID + "/acceptances", Bearer: owner.Token,
		JSON: map[string]any{"justification": "j", "validUntil": today(env).AddDate(0, 0, 30).Format("2006-01-02")}}).
		Expect(http.StatusCreated).Map()
	accID := acc["id"].(string)
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/acceptances/" + accID + "/approve", Bearer: other.Token,
		JSON: map[string]any{}}).Expect(http.StatusOK)

	spec := apitest.LoadSpec(t, "../../../docs/openapi.yaml")
	for _, c := range []struct{ path, bearer string }{{"/v2", a.Key}, {"/v1", owner.Token}} {
		res := env.Do(apitest.Request{Method: http.MethodGet, Path: c.path + "/actions/" + act["id"].(string), Bearer: c.bearer}).
			Expect(http.StatusOK)
		spec.Check(t, http.MethodGet, c.path+"/actions/"+act["id"].(string), nil, res)
		if got := res.Map(); got["title"] != "fix it" || got["version"] != 2.0 || res.Header().Get("ETag") != `"2"` {
			t.Errorf("GET %s/actions: %v, ETag %s; want the action at version 2", c.path, got, res.Header().Get("ETag"))
		}
		res = env.Do(apitest.Request{Method: http.MethodGet, Path: c.path + "/acceptances/" + accID, Bearer: c.bearer, Header: newest}).
			Expect(http.StatusOK)
		spec.Check(t, http.MethodGet, c.path+"/acceptances/"+accID, nil, res)
		got := res.Map()
		snap, _ := got["riskSnapshot"].(map[string]any)
		if got["status"] != "approved" || res.Header().Get("ETag") != `"2"` || snap == nil {
			t.Fatalf("GET %s/acceptances: %v, ETag %s", c.path, got, res.Header().Get("ETag"))
		}
		if o, _ := snap["owner"].(map[string]any); o == nil || o["userId"] != owner.ID {
			t.Errorf("2027-01-15 snapshot owner %v, want the user object", snap["owner"])
		}
		old := env.Do(apitest.Request{Method: http.MethodGet, Path: c.path + "/acceptances/" + accID, Bearer: c.bearer, Header: oldest}).
			Expect(http.StatusOK).Map()
		if s := old["riskSnapshot"].(map[string]any); s["owner"] != owner.Email {
			t.Errorf("2026-12-01 snapshot owner %v, want %s", s["owner"], owner.Email)
		}
	}
	for _, c := range []struct{ name, bearer, path string }{
		{"another tenant's action", b.Key, "/v2/actions/" + act["id"].(string)},
		{"another tenant's acceptance", b.Key, "/v2/acceptances/" + accID},
		{"a live action from the sandbox", env.TestKey(a), "/v2/actions/" + act["id"].(string)},
		{"a live acceptance from the sandbox", env.TestKey(a), "/v2/acceptances/" + accID},
		{"a malformed action ID", a.Key, "/v2/actions/risk_x"},
		{"a malformed acceptance ID", a.Key, "/v2/acceptances/act_x"},
	} {
		if res := env.Do(apitest.Request{Method: http.MethodGet, Path: c.path, Bearer: c.bearer}); res.Code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", c.name, res.Code)
		}
	}
}
