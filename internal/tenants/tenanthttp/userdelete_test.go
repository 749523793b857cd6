package tenanthttp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/apiversion"
	"github.com/riskapi/riskapi/internal/tenants"
)

// TestDeletingAUserLeavesTheirRisksANameOwner: in the transaction that deletes a
// user, each risk they owned (live and in the sandbox) becomes a name owner named
// their email, as an update: its version moves and risk.updated is audited, by the
// admin who deleted the user. Such a risk reads and PUTs back as read, and the
// register's export imports back unchanged — none names a user who is gone.
func TestDeletingAUserLeavesTheirRisksANameOwner(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	admin := apitest.Login(t, env, a).Token
	gone := env.User(a.ID, tenants.RoleMember)
	stays := env.User(a.ID, tenants.RoleMember)
	newest := http.Header{apiversion.Header: {string(apiversion.V20270115)}}
	create := func(key string, owner map[string]any) map[string]any {
		return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: key, Header: newest,
			JSON: map[string]any{"title": "r", "owner": owner}}).Expect(http.StatusCreated).Map()
	}
	owned := create(a.Key, map[string]any{"userId": gone.ID})
	owned2 := create(a.Key, map[string]any{"userId": gone.ID})
	other := create(a.Key, map[string]any{"userId": stays.ID})
	named := create(a.Key, map[string]any{"name": "Ann"})
	testKey := env.TestKey(a)
	sandboxed := create(testKey, map[string]any{"userId": gone.ID})

	apitest.Do(t, env, apitest.Request{Method: "DELETE", Path: "/v1/users/" + gone.ID, Bearer: admin}).Expect(http.StatusNoContent)

	get := func(key string, r map[string]any) *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + r["id"].(string), Bearer: key, Header: newest}).
			Expect(http.StatusOK)
	}
	for _, c := range []struct {
		key  string
		risk map[string]any
	}{{a.Key, owned}, {a.Key, owned2}, {testKey, sandboxed}} {
		after := get(c.key, c.risk).Map()
		owner, _ := after["owner"].(map[string]any)
		if owner == nil || owner["userId"] != nil || owner["name"] != gone.Email {
			t.Errorf("risk %v owner after its user was deleted = %v, want the name %s", c.risk["id"], after["owner"], gone.Email)
		}
		if after["version"].(float64) != c.risk["version"].(float64)+1 {
			t.Errorf("risk %v version %v, want one more than %v", c.risk["id"], after["version"], c.risk["version"])
		}
	}
	for _, r := range []map[string]any{other, named} {
		if after := get(a.Key, r).Map(); after["version"].(float64) != r["version"].(float64) {
			t.Errorf("risk %v not owned by the deleted user changed: version %v", r["id"], after["version"])
		}
	}
	entries := audit(t, env, admin, "risk.updated")
	disowned := 0
	for _, e := range entries {
		if e.Target.ID == owned["id"] || e.Target.ID == owned2["id"] {
			disowned++
			if e.Actor.Type != "user" {
				t.Errorf("risk.updated of %s by %s, want the admin (user)", e.Target.ID, e.Actor.Type)
			}
		}
	}
	if disowned != 2 {
		t.Errorf("%d risk.updated entries for the disowned risks, want 2", disowned)
	}

	// A PUT of the risk as read (its writable members) is accepted.
	read := get(a.Key, owned)
	body := read.Map()
	for _, k := range []string{"id", "version", "createdAt", "updatedAt", "livemode", "residualScore"} {
		delete(body, k)
	}
	env.Do(apitest.Request{Method: http.MethodPut, Path: "/v2/risks/" + owned["id"].(string), Bearer: a.Key,
		Header: http.Header{apiversion.Header: newest[apiversion.Header], "If-Match": {read.Header().Get("ETag")}},
		JSON:   body}).Expect(http.StatusOK)

	// The export imports back: every row unchanged.
	export := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/export?format=csv", Bearer: a.Key}).Expect(http.StatusOK)
	csv := export.Body.String()
	if strings.Contains(csv, gone.ID) {
		t.Fatalf("the export still names the deleted user %s:\n%s", gone.ID, csv)
	}
	part, ct := apitest.Multipart("", apitest.FilePart("file", "risks.csv", "text/csv", csv))
	var rep struct{ Created, Updated, Unchanged int }
	env.Upload("/v2/risks/import", a.Key, nil, part, ct).Expect(http.StatusCreated).Decode(&rep)
	if rep.Created != 0 || rep.Updated != 0 || rep.Unchanged != 4 {
		t.Errorf("re-import of the export: %+v, want 4 unchanged", rep)
	}
}
