package followuphttp_test

import (
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/tenants"
)

// TestFollowupWritesAreKeyedAndScoped: each write of section 20 under /v2 — a
// review, an action, its edit, an acceptance request — sent twice with one
// Idempotency-Key is applied once (the second answers the first's bytes, marked
// replayed, and emits nothing more); a risks:read key is refused them (403
// FORBIDDEN) and may read them.
func TestFollowupWritesAreKeyedAndScoped(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	owner := env.User(a.ID, tenants.RoleMember)
	id := newRisk(t, env, a.Key, map[string]any{"title": "t", "reviewEvery": "P1M"})
	until := today(env).AddDate(0, 2, 0).Format("2006-01-02")

	twice := func(method, path, key string, body map[string]any, want int) *apitest.Response {
		t.Helper()
		send := func() *apitest.Response {
			return env.Do(apitest.Request{Method: method, Path: path, Bearer: a.Key,
				Header: http.Header{"Idempotency-Key": {key}}, JSON: body}).Expect(want)
		}
		first, again := send(), send()
		if first.Header().Get("Idempotent-Replayed") != "false" || again.Header().Get("Idempotent-Replayed") != "true" {
			t.Errorf("%s %s: Idempotent-Replayed %q then %q, want false then true", method, path,
				first.Header().Get("Idempotent-Replayed"), again.Header().Get("Idempotent-Replayed"))
		}
		if first.Body.String() != again.Body.String() {
			t.Errorf("%s %s: the replay answered\n%s\nnot the first answer\n%s", method, path, again.Body, first.Body)
		}
		return first
	}
	count := func(path string) int {
		t.Helper()
		var page struct{ Data []map[string]any }
		env.Do(apitest.Request{Method: http.MethodGet, Path: path, Bearer: a.ReadKey}).Expect(http.StatusOK).Decode(&page)
		return len(page.Data)
	}

	twice(http.MethodPost, "/v2/risks/"+id+"/reviews", "review-once-0001", map[string]any{"outcome": "unchanged"}, http.StatusCreated)
	act := twice(http.MethodPost, "/v2/risks/"+id+"/actions", "action-once-0001",
		map[string]any{"title": "fix", "ownerId": owner.ID}, http.StatusCreated).Map()["id"].(string)
	twice(http.MethodPatch, "/v2/actions/"+act, "action-edit-0001", map[string]any{"title": "fix it"}, http.StatusOK)
	twice(http.MethodPost, "/v2/risks/"+id+"/acceptances", "accept-once-0001",
		map[string]any{"justification": "cheap", "validUntil": until}, http.StatusCreated)

	for path, want := range map[string]int{"/v2/risks/" + id + "/reviews": 1, "/v2/risks/" + id + "/actions": 1, "/v2/risks/" + id + "/acceptances": 1} {
		if got := count(path); got != want {
			t.Errorf("GET %s: %d, want %d after each write sent twice", path, got, want)
		}
	}
	if r := getRisk(t, env, a.Key, id); r["version"] != float64(2) {
		t.Errorf("risk version %v after one review sent twice, want 2", r["version"])
	}
	for typ, want := range map[string]int{"review.created": 1, "action.created": 1, "action.updated": 1, "acceptance.created": 1} {
		if got := len(eventsOfType(t, env, a.Key, typ)); got != want {
			t.Errorf("%d %s events, want %d", got, typ, want)
		}
	}

	// risks:read reads but never writes.
	for _, w := range []struct {
		method, path string
		body         map[string]any
	}{
		{http.MethodPost, "/v2/risks/" + id + "/reviews", map[string]any{"outcome": "unchanged"}},
		{http.MethodPost, "/v2/risks/" + id + "/actions", map[string]any{"title": "x", "ownerId": owner.ID}},
		{http.MethodPatch, "/v2/actions/" + act, map[string]any{"title": "x"}},
		{http.MethodPost, "/v2/risks/" + id + "/acceptances", map[string]any{"justification": "x", "validUntil": until}},
	} {
		env.Do(apitest.Request{Method: w.method, Path: w.path, Bearer: a.ReadKey, JSON: w.body}).
			ExpectProblem(http.StatusForbidden, "FORBIDDEN")
	}
	if got := count("/v2/actions?ownerId=" + owner.ID); got != 1 {
		t.Errorf("%d actions after the refused writes, want 1", got)
	}
}
