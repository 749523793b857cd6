package followuphttp_test

import (
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/tenants"
)

// TestActionPatchRequiresIfMatch: with REQUIRE_IF_MATCH=true a PATCH of an action
// without If-Match is 428 PRECONDITION_REQUIRED and changes nothing, as a risk's
// (contract section 20: "If-Match as section 12"); with its ETag it applies, and
// creating an action or recording a review (no version to name) needs none.
func TestActionPatchRequiresIfMatch(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *config.Config) { c.HTTP.RequireIfMatch = true })
	a := env.Tenant("Acme")
	owner := env.User(a.ID, tenants.RoleMember)
	id := newRisk(t, env, a.Key, map[string]any{"title": "t"})
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + id + "/reviews", Bearer: a.Key,
		JSON: map[string]any{"outcome": "unchanged"}}).Expect(http.StatusCreated)
	act := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + id + "/actions", Bearer: a.Key,
		JSON: map[string]any{"title": "fix", "ownerId": owner.ID}}).Expect(http.StatusCreated)
	item := "/v2/actions/" + act.Map()["id"].(string)
	env.Do(apitest.Request{Method: http.MethodPatch, Path: item, Bearer: a.Key,
		JSON: map[string]any{"status": "done"}}).ExpectProblem(http.StatusPreconditionRequired, "PRECONDITION_REQUIRED")
	if got := env.Do(apitest.Request{Method: http.MethodGet, Path: item, Bearer: a.Key}).Expect(http.StatusOK).Map(); got["status"] != "open" || got["version"] != float64(1) {
		t.Fatalf("after a PATCH without If-Match: %v, want open at version 1", got)
	}
	got := env.Do(apitest.Request{Method: http.MethodPatch, Path: item, Bearer: a.Key, Header: http.Header{"If-Match": {act.Header().Get("ETag")}},
		JSON: map[string]any{"status": "done"}}).Expect(http.StatusOK).Map()
	if got["status"] != "done" || got["version"] != float64(2) {
		t.Errorf("PATCH with If-Match = %v, want done at version 2", got)
	}
}
