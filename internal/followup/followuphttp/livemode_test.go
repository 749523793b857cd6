package followuphttp_test

import (
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/tenants"
)

// TestFollowupLivemode: reviews, actions and acceptances say which mode they are of,
// like every object (docs/sandboxes.md): made with a live key "livemode": true,
// with a test key false, in their answers, their lists and their events.
func TestFollowupLivemode(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	owner := env.User(a.ID, tenants.RoleMember)
	until := today(env).AddDate(0, 3, 0).Format("2006-01-02")
	for key, want := range map[string]bool{a.Key: true, env.TestKey(a): false} {
		id := newRisk(t, env, key, map[string]any{"title": "t"})
		objs := map[string]map[string]any{
			"review": env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + id + "/reviews", Bearer: key,
				JSON: map[string]any{"note": "n", "outcome": "unchanged"}}).Expect(http.StatusCreated).Map(),
			"action": env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + id + "/actions", Bearer: key,
				JSON: map[string]any{"title": "fix", "ownerId": owner.ID}}).Expect(http.StatusCreated).Map(),
			"acceptance": env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + id + "/acceptances", Bearer: key,
				JSON: map[string]any{"justification": "j", "validUntil": until}}).Expect(http.StatusCreated).Map(),
		}
		for kind, obj := range objs {
			if obj["livemode"] != want {
				t.Errorf("%s made with livemode %v: %v", kind, want, obj)
			}
			evs := eventsOfType(t, env, key, kind+".created")
			if len(evs) == 0 {
				t.Errorf("no %s.created event", kind)
				continue
			}
			o := evs[0]["data"].(map[string]any)["object"].(map[string]any)
			if evs[0]["livemode"] != want || o["livemode"] != want {
				t.Errorf("%s.created event: livemode %v, object's %v; want %v", kind, evs[0]["livemode"], o["livemode"], want)
			}
		}
		var page struct{ Data []map[string]any }
		env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + id + "/actions", Bearer: key}).Expect(http.StatusOK).Decode(&page)
		if len(page.Data) != 1 || page.Data[0]["livemode"] != want {
			t.Errorf("actions list = %v, want one with livemode %v", page.Data, want)
		}
	}
}
