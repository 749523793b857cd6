package followuphttp_test

import (
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/tenants"
)

// TestValuesStoredBeforeARuleStayChangeable: a risk and an action stored before
// today's text and date rules (a title with ESC and U+202E, a review date in 1899,
// written here straight to the store) can still be changed in their other fields,
// reviewed, and have an acceptance approved; a change that writes such a value
// anew is refused, naming it, and a change of that field to a good value is taken.
func TestValuesStoredBeforeARuleStayChangeable(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	requester := env.User(a.ID, tenants.RoleAdmin)
	approver := env.User(a.ID, tenants.RoleAdmin)
	id := newRisk(t, env, a.Key, map[string]any{"title": "t"})
	act := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + id + "/actions", Bearer: a.Key,
		JSON: map[string]any{"title": "a", "ownerId": requester.ID, "dueDate": "2030-01-01"}}).Expect(http.StatusCreated).Map()["id"].(string)
	legacy := "old \x1b[31m\u202etitle"
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"UPDATE risks SET title = ?, review_date = '1899-06-01' WHERE id = ?", []any{legacy, id}},
		{"UPDATE risk_actions SET title = ?, due_date = '0001-01-01' WHERE id = ?", []any{legacy, act}},
	} {
		if err := env.App.DB.DB.Exec(q.sql, q.args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	patch := func(path string, body map[string]any) *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodPatch, Path: path, Bearer: a.Key, JSON: body})
	}
	if got := patch("/v2/risks/"+id, map[string]any{"status": "mitigated"}).Expect(http.StatusOK).Map(); got["title"] != legacy || got["status"] != "mitigated" {
		t.Errorf("status PATCH of a legacy risk: %v, want mitigated with its title kept", got)
	}
	patch("/v2/risks/"+id, map[string]any{"title": "new \u202e"}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	patch("/v2/risks/"+id, map[string]any{"reviewDate": "1899-06-02"}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + id + "/reviews", Bearer: a.Key,
		JSON: map[string]any{"outcome": "unchanged", "note": "looked"}}).Expect(http.StatusCreated)
	if got := patch("/v2/actions/"+act, map[string]any{"status": "done"}).Expect(http.StatusOK).Map(); got["title"] != legacy {
		t.Errorf("status PATCH of a legacy action: %v, want its title kept", got)
	}
	patch("/v2/actions/"+act, map[string]any{"title": "again \x07"}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	until := today(env).AddDate(0, 1, 0).Format("2006-01-02")
	acc := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/risks/" + id + "/acceptances", Bearer: requester.Token,
		JSON: map[string]any{"justification": "cheap", "validUntil": until}}).Expect(http.StatusCreated).Map()["id"].(string)
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/acceptances/" + acc + "/approve", Bearer: approver.Token,
		JSON: map[string]any{"note": "ok"}}).Expect(http.StatusOK)
	if got := patch("/v2/risks/"+id, map[string]any{"title": "mended"}).Expect(http.StatusOK).Map(); got["title"] != "mended" || got["treatment"] != "accept" {
		t.Errorf("after mending the title: %v, want it taken and the treatment accept", got)
	}
	// Approvers read justifications and notes: what would reverse them is refused.
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/risks/" + id + "/acceptances", Bearer: requester.Token,
		JSON: map[string]any{"justification": "fine \u202e", "validUntil": until}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + id + "/reviews", Bearer: a.Key,
		JSON: map[string]any{"outcome": "unchanged", "note": "\u2066hidden\u2069"}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	patch("/v2/risks/"+id, map[string]any{"metadata": map[string]string{"k": "x\u202e"}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
}
