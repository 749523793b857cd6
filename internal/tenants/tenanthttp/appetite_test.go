package tenanthttp_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/tenants"
)

func createRisk(t *testing.T, env *apitest.Env, key string, body map[string]any) map[string]any {
	t.Helper()
	return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: key, JSON: body}).Expect(http.StatusCreated).Map()
}

func outsideTitles(t *testing.T, env *apitest.Env, key, value string) []string {
	t.Helper()
	var page struct{ Data []struct{ Title string } }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks?sort=title&outsideAppetite=" + value, Bearer: key}).
		Expect(http.StatusOK).Decode(&page)
	var out []string
	for _, r := range page.Data {
		out = append(out, r.Title)
	}
	return out
}

func exceeded(t *testing.T, env *apitest.Env, key string) []map[string]any {
	t.Helper()
	var page struct{ Data []map[string]any }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/events?limit=100&type=risk.appetite_exceeded", Bearer: key}).
		Expect(http.StatusOK).Decode(&page)
	return page.Data
}

// TestAppetiteFilterAndEvent: an admin sets the tenant's appetite (overall and for
// one category, any letter case); outsideAppetite lists exactly the risks above
// their category's appetite, else the tenant's; risk.appetite_exceeded is emitted
// once per crossing — on the write that crosses, not on writes that stay above, and
// again after the risk went back within and crossed anew.
func TestAppetiteFilterAndEvent(t *testing.T) {
	env := apitest.New(t)
	ten := env.Tenant("Appetite")
	admin := apitest.Login(t, env, ten).Token
	member := env.User(ten.ID, tenants.RoleMember)

	// Before any appetite nothing is outside it.
	createRisk(t, env, ten.Key, map[string]any{"title": "a-low", "category": "Ops", "likelihood": 2, "impact": 2})
	high := createRisk(t, env, ten.Key, map[string]any{"title": "b-high", "category": "Ops", "likelihood": 4, "impact": 4})
	createRisk(t, env, ten.Key, map[string]any{"title": "c-sec", "category": "Security", "likelihood": 3, "impact": 3})
	createRisk(t, env, ten.Key, map[string]any{"title": "d-unscored", "category": "Ops"})
	if got := outsideTitles(t, env, ten.Key, "true"); len(got) != 0 {
		t.Fatalf("outside with no appetite: %v", got)
	}

	// Members may not set it.
	env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/tenant", Bearer: member.Token,
		JSON: map[string]any{"riskAppetite": 10}}).ExpectProblem(http.StatusForbidden, "FORBIDDEN")
	got := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/tenant", Bearer: admin}).Expect(http.StatusOK)
	if got.Header().Get("ETag") != `"1"` {
		t.Fatalf("ETag %q, want \"1\"", got.Header().Get("ETag"))
	}
	env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/tenant", Bearer: admin,
		JSON: map[string]any{"riskAppetite": 26}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	res := env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/tenant", Bearer: admin, Header: http.Header{"If-Match": {`"1"`}},
		JSON: map[string]any{"riskAppetite": 10, "categoryAppetite": map[string]any{"security": 6}}}).Expect(http.StatusOK)
	if res.Header().Get("ETag") != `"2"` || res.Map()["riskAppetite"] != float64(10) {
		t.Fatalf("PATCH: %s %s", res.Header().Get("ETag"), res.Body)
	}
	// A stale If-Match changes nothing: 412 with the appetite as stored.
	stale := env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/tenant", Bearer: admin, Header: http.Header{"If-Match": {`"1"`}},
		JSON: map[string]any{"riskAppetite": 3}}).ExpectProblem(http.StatusPreconditionFailed, "PRECONDITION_FAILED").Map()
	if cur := stale["current"].(map[string]any); cur["riskAppetite"] != float64(10) {
		t.Fatalf("412 current: %v", cur)
	}

	// Ops 16 > 10 (overall); Security 9 > 6 (its own, any case); 4 and unscored are within.
	if got, want := outsideTitles(t, env, ten.Key, "true"), []string{"b-high", "c-sec"}; !slices.Equal(got, want) {
		t.Fatalf("outsideAppetite=true: %v, want %v", got, want)
	}
	if got, want := outsideTitles(t, env, ten.Key, "false"), []string{"a-low", "d-unscored"}; !slices.Equal(got, want) {
		t.Fatalf("outsideAppetite=false: %v, want %v", got, want)
	}
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks?outsideAppetite=yes", Bearer: ten.Key}).
		ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	// Risks created before the appetite was set crossed nothing: no write moved them.
	if n := len(exceeded(t, env, ten.Key)); n != 0 {
		t.Fatalf("%d events before any crossing", n)
	}

	id := high["id"].(string)
	patch := func(body map[string]any) {
		t.Helper()
		env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + id, Bearer: ten.Key, JSON: body}).Expect(http.StatusOK)
	}
	patch(map[string]any{"likelihood": 2})   // 8: within
	patch(map[string]any{"likelihood": 3})   // 12: crosses
	patch(map[string]any{"likelihood": 5})   // 20: stays above
	patch(map[string]any{"title": "b-high"}) // nothing
	evs := exceeded(t, env, ten.Key)
	if len(evs) != 1 {
		t.Fatalf("%d risk.appetite_exceeded events after one crossing, want 1", len(evs))
	}
	obj := evs[0]["data"].(map[string]any)["object"].(map[string]any)
	if obj["id"] != id || obj["riskScore"] != float64(12) || obj["appetite"] != float64(10) {
		t.Fatalf("event object: %v", obj)
	}
	patch(map[string]any{"likelihood": 1}) // 4: back within
	patch(map[string]any{"likelihood": 5}) // 20: crosses again
	// A creation above appetite is a crossing too.
	createRisk(t, env, ten.Key, map[string]any{"title": "e-new", "category": "SECURITY", "likelihood": 2, "impact": 4})
	if n := len(exceeded(t, env, ten.Key)); n != 3 {
		t.Fatalf("%d events after three crossings, want 3", n)
	}
}

// TestEachWriteJudgesByTheAppetiteAsItIsNow: a write reads the appetite with its
// credential, an API key or a session (docs/register.md, Appetite), yet every change
// of it — overall, a category's, cleared — holds from the next write on, the
// session's included, and a test key's or a test-mode session's writes are judged by
// the sandbox's appetite, not the live one's.
func TestEachWriteJudgesByTheAppetiteAsItIsNow(t *testing.T) {
	env := apitest.New(t)
	ten := env.Tenant("Moving")
	admin := apitest.Login(t, env, ten).Token
	m := env.User(ten.ID, tenants.RoleMember)
	member := apitest.LoginAs(t, env, m.Email, m.Password).Token
	modeHeader := func(mode string) http.Header {
		h := http.Header{}
		if mode != "" {
			h.Set("Riskapi-Mode", mode)
		}
		return h
	}
	set := func(mode string, body map[string]any) {
		t.Helper()
		env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/tenant", Bearer: admin, Header: modeHeader(mode), JSON: body}).Expect(http.StatusOK)
	}
	n := 0
	// write creates a risk scored l×i in category with key (a session's token: on
	// /v1, in mode), and returns the appetite of the risk.appetite_exceeded it
	// emitted, or 0 for none; events reads the events of the risk's data scope.
	write := func(key, mode, events, category string, l, i int) float64 {
		t.Helper()
		n++
		body := map[string]any{"title": fmt.Sprint("r", n), "category": category, "likelihood": l, "impact": i}
		path := "/v2/risks"
		if key == admin || key == member {
			path = "/v1/risks"
		}
		id := env.Do(apitest.Request{Method: http.MethodPost, Path: path, Bearer: key, Header: modeHeader(mode), JSON: body}).
			Expect(http.StatusCreated).Map()["id"]
		for _, ev := range exceeded(t, env, events) {
			if obj := ev["data"].(map[string]any)["object"].(map[string]any); obj["id"] == id {
				return obj["appetite"].(float64)
			}
		}
		return 0
	}
	for _, step := range []struct {
		change map[string]any // PATCH /v1/tenant before the write; nil: none
		cat    string
		l, i   int
		want   float64
	}{
		{nil, "Ops", 5, 5, 0},
		{map[string]any{"riskAppetite": 10}, "Ops", 3, 4, 10},
		{map[string]any{"riskAppetite": 15}, "Ops", 3, 4, 0},
		{nil, "Ops", 4, 4, 15},
		{map[string]any{"categoryAppetite": map[string]any{"ops": 20}}, "Ops", 4, 4, 0},
		{map[string]any{"categoryAppetite": map[string]any{"ops": 3}}, "OPS", 2, 2, 3},
		{map[string]any{"categoryAppetite": map[string]any{"ops": nil}}, "Ops", 4, 4, 15},
		{map[string]any{"riskAppetite": nil}, "Ops", 5, 5, 0},
	} {
		// The admin's own session, another user's, then the API key: each the
		// very next write after the change.
		for _, by := range []struct{ name, key string }{{"the admin's session", admin}, {"a member's session", member}, {"the API key", ten.Key}} {
			if step.change != nil {
				set("", step.change)
			}
			if got := write(by.key, "", ten.Key, step.cat, step.l, step.i); got != step.want {
				t.Fatalf("after %v, a %s risk of %d by %s: appetite_exceeded with appetite %v, want %v (0: none)",
					step.change, step.cat, step.l*step.i, by.name, got, step.want)
			}
		}
	}

	// The sandbox's appetite is its own: the live one's 2 reaches neither a test key
	// nor a session in test mode.
	testKey := env.TestKey(ten)
	set("", map[string]any{"riskAppetite": 2})
	if got := write(testKey, "", testKey, "Ops", 3, 3); got != 0 {
		t.Fatalf("a test key's write judged by the live appetite: %v", got)
	}
	if got := write(member, "test", testKey, "Ops", 3, 3); got != 0 {
		t.Fatalf("a test-mode session's write judged by the live appetite: %v", got)
	}
	set("test", map[string]any{"riskAppetite": 5})
	if got := write(testKey, "", testKey, "Ops", 3, 3); got != 5 {
		t.Fatalf("a test key's write above the sandbox's appetite 5: %v, want 5", got)
	}
	if got := write(member, "test", testKey, "Ops", 3, 3); got != 5 {
		t.Fatalf("a test-mode session's write above the sandbox's appetite 5: %v, want 5", got)
	}
	if got := write(ten.Key, "", ten.Key, "Ops", 1, 3); got != 2 {
		t.Fatalf("a live key's write above the live appetite 2: %v, want 2", got)
	}
	if got := write(member, "", ten.Key, "Ops", 1, 3); got != 2 {
		t.Fatalf("a live session's write above the live appetite 2: %v, want 2", got)
	}
}
