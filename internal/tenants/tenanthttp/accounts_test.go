package tenanthttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/route"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/tenants/tenanthttp"
	"github.com/riskapi/riskapi/internal/webhooks"
	"github.com/riskapi/riskapi/internal/webhooks/sourcehttp"
)

func bearer(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }

func key(k string) http.Header { return http.Header{"Idempotency-Key": {k}} }

// adminRoutes are the self-service routes flagged admin-only.
func adminRoutes() []route.Route {
	var out []route.Route
	for _, r := range append(tenanthttp.Routes(tenanthttp.Config{}), sourcehttp.Routes(sourcehttp.Config{})...) {
		if r.Admin {
			out = append(out, r)
		}
	}
	return out
}

// targets makes, for each admin route, a request an admin must be able to make:
// fresh rows for the deletes, valid bodies for the writes.
func targets(t *testing.T, env *apitest.Env, tenantID string) map[string]apitest.Request {
	t.Helper()
	ctx := context.Background()
	victim := env.User(tenantID, tenants.RoleMember)
	k, _, err := env.App.Tenants.CreateAPIKey(ctx, tenantID, "victim", tenants.AllScopes)
	if err != nil {
		t.Fatal(err)
	}
	k2, _, err := env.App.Tenants.CreateAPIKey(ctx, tenantID, "rolled", tenants.AllScopes)
	if err != nil {
		t.Fatal(err)
	}
	src, err := env.App.Webhooks.CreateSource(ctx, tenantID, "victim-"+tenantID[len(tenantID)-8:])
	if err != nil {
		t.Fatal(err)
	}
	return map[string]apitest.Request{
		"GET /users":                  {Method: "GET", Path: "/v1/users"},
		"PATCH /tenant":               {Method: "PATCH", Path: "/v1/tenant", JSON: map[string]any{"riskAppetite": 5}},
		"POST /users":                 {Method: "POST", Path: "/v1/users", JSON: map[string]string{"email": "new-" + tenantID[len(tenantID)-8:] + "@example.com", "password": "password123", "role": "member"}},
		"PATCH /users/:id":            {Method: "PATCH", Path: "/v1/users/" + victim.ID, JSON: map[string]string{"role": "admin"}},
		"DELETE /users/:id":           {Method: "DELETE", Path: "/v1/users/" + victim.ID},
		"GET /api-keys":               {Method: "GET", Path: "/v1/api-keys"},
		"POST /api-keys":              {Method: "POST", Path: "/v1/api-keys", JSON: map[string]any{"name": "ci", "scopes": []string{"risks:read"}}},
		"DELETE /api-keys/:id":        {Method: "DELETE", Path: "/v1/api-keys/" + k.ID},
		"POST /api-keys/:id/roll":     {Method: "POST", Path: "/v1/api-keys/" + k2.ID + "/roll", JSON: map[string]any{"expiresIn": 60}},
		"GET /webhook-sources":        {Method: "GET", Path: "/v1/webhook-sources"},
		"POST /webhook-sources":       {Method: "POST", Path: "/v1/webhook-sources", JSON: map[string]string{"source": "new-" + tenantID[len(tenantID)-8:]}},
		"DELETE /webhook-sources/:id": {Method: "DELETE", Path: "/v1/webhook-sources/" + src.ID},
		"POST /tenant/api-version":    {Method: "POST", Path: "/v1/tenant/api-version", JSON: map[string]string{"version": "2027-01-15"}},
	}
}

// TestMembersAreRefusedAdminRoutes: on every admin route a member gets 403 and
// changes nothing; an admin gets 2xx; an API key (on /v1 it is no credential) 401.
func TestMembersAreRefusedAdminRoutes(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	admin := env.User(a.ID, tenants.RoleAdmin)
	member := env.User(a.ID, tenants.RoleMember)
	reqs := targets(t, env, a.ID)
	routes := adminRoutes()
	if len(routes) != len(reqs) {
		t.Fatalf("%d admin routes, %d requests: every admin route needs one", len(routes), len(reqs))
	}
	for _, r := range routes {
		req, ok := reqs[r.Method+" "+r.Path]
		if !ok {
			t.Fatalf("no request for admin route %s %s", r.Method, r.Path)
		}
		req.Header = bearer(member.Token)
		env.Do(req).ExpectProblem(http.StatusForbidden, "FORBIDDEN")
		req.Header = bearer(a.Key)
		env.Do(req).ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
		req.Header = bearer(admin.Token)
		if res := env.Do(req); res.Code/100 != 2 {
			t.Errorf("admin %s %s → %d %s", req.Method, req.Path, res.Code, res.Body.String())
		}
	}
	// The member's refused PATCH changed nothing; their own account is theirs.
	var me map[string]map[string]string
	env.Do(apitest.Request{Method: "GET", Path: "/v1/me", Bearer: member.Token}).Expect(http.StatusOK).Decode(&me)
	if me["user"]["id"] != member.ID || me["user"]["role"] != "member" || me["tenant"]["id"] != a.ID || me["tenant"]["name"] != "Acme" {
		t.Errorf("GET /v1/me = %v", me)
	}
	env.Do(apitest.Request{Method: "POST", Path: "/v1/risks", Bearer: member.Token, JSON: map[string]string{"title": "t"}}).
		Expect(http.StatusCreated)
}

// TestOtherTenantsIDsAre404: an admin naming another tenant's user, key or source
// gets 404 on every route, and nothing of it changes or is listed.
func TestOtherTenantsIDsAre404(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.Tenant("Acme"), env.Tenant("Globex")
	admin := env.User(a.ID, tenants.RoleAdmin)
	theirs := targets(t, env, b.ID)
	bAdmin := env.User(b.ID, tenants.RoleAdmin)
	for _, name := range []string{"PATCH /users/:id", "DELETE /users/:id", "DELETE /api-keys/:id", "DELETE /webhook-sources/:id"} {
		req := theirs[name]
		req.Bearer = admin.Token
		env.Do(req).ExpectProblem(http.StatusNotFound, "NOT_FOUND")
		// Malformed IDs too.
		req.Path = req.Path[:strings.LastIndex(req.Path, "/")+1] + "usr_nope"
		env.Do(req).ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	}
	// What was named still works for its own tenant.
	for _, name := range []string{"PATCH /users/:id", "DELETE /users/:id", "DELETE /api-keys/:id", "DELETE /webhook-sources/:id"} {
		req := theirs[name]
		req.Bearer = bAdmin.Token
		if res := env.Do(req); res.Code/100 != 2 {
			t.Errorf("%s by its own tenant → %d %s", name, res.Code, res.Body.String())
		}
	}
	for _, path := range []string{"/v1/users", "/v1/api-keys", "/v1/webhook-sources"} {
		body := env.Do(apitest.Request{Method: "GET", Path: path, Bearer: admin.Token}).Expect(http.StatusOK).Body.String()
		for _, id := range []string{b.ID, b.KeyID, bAdmin.ID, b.Email} {
			if strings.Contains(body, id) {
				t.Errorf("GET %s shows %s of another tenant: %s", path, id, body)
			}
		}
	}
}

// dump returns every value of every row of every table as text: where a secret in
// the clear would show.
func dump(t *testing.T, env *apitest.Env) string {
	t.Helper()
	tables, err := env.App.DB.Migrator().GetTables()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, tbl := range tables {
		var rows []map[string]any
		if err := env.App.DB.Table(tbl).Find(&rows).Error; err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			for _, v := range r {
				fmt.Fprintf(&b, "%s\n", v)
			}
		}
	}
	return b.String()
}

// TestAPIKeyLifecycle: a key created through /v1 works on /v2 with exactly its
// scopes, its secret is never in a later response, a log line or a database column,
// and after DELETE it gets 401.
func TestAPIKeyLifecycle(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	admin := env.User(a.ID, tenants.RoleAdmin)
	var created struct {
		ID, Name, Key string
		Scopes        []string
		RevokedAt     *string
	}
	res := env.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Bearer: admin.Token,
		JSON: map[string]any{"name": "reporting", "scopes": []string{"risks:read"}}}).Expect(http.StatusCreated)
	res.Decode(&created)
	if !strings.HasPrefix(created.Key, "rk_") || created.Name != "reporting" || len(created.Scopes) != 1 ||
		res.Header().Get("Location") != "/v1/api-keys/"+created.ID {
		t.Fatalf("created %+v, Location %q", created, res.Header().Get("Location"))
	}
	env.Do(apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: created.Key}).Expect(http.StatusOK)
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: created.Key, JSON: map[string]string{"title": "t"}}).
		ExpectProblem(http.StatusForbidden, "FORBIDDEN")

	list := env.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Bearer: admin.Token}).Expect(http.StatusOK).Body.String()
	if !strings.Contains(list, created.ID) {
		t.Errorf("the list lacks the key: %s", list)
	}
	secretPart := strings.TrimPrefix(created.Key, "rk_")
	for where, text := range map[string]string{"the list": list, "the logs": env.Logs.String(), "the database": dump(t, env)} {
		if strings.Contains(text, secretPart) {
			t.Errorf("the secret is in %s", where)
		}
	}

	env.Do(apitest.Request{Method: "DELETE", Path: "/v1/api-keys/" + created.ID, Bearer: admin.Token}).Expect(http.StatusNoContent)
	env.Do(apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: created.Key}).ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
	env.Do(apitest.Request{Method: "DELETE", Path: "/v1/api-keys/" + created.ID, Bearer: admin.Token}).Expect(http.StatusNoContent)
	var page struct {
		Data []struct {
			ID        string
			RevokedAt *string
		}
	}
	env.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Bearer: admin.Token}).Expect(http.StatusOK).Decode(&page)
	for _, k := range page.Data {
		if k.ID == created.ID && k.RevokedAt == nil {
			t.Errorf("the revoked key lists without revokedAt")
		}
	}
	env.Do(apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key}).Expect(http.StatusOK) // others unharmed
	// Bad input is named.
	env.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Bearer: admin.Token,
		JSON: map[string]any{"scopes": []string{"risks:admin"}}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	env.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Bearer: admin.Token,
		JSON: map[string]any{"name": "x"}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
}

// TestWebhookSourceLifecycle: a source created through /v1 verifies deliveries
// signed with its secret, the secret is never in a later response, a log line or a
// database column, and after DELETE its deliveries get 401.
func TestWebhookSourceLifecycle(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	admin := env.User(a.ID, tenants.RoleAdmin)
	var created struct{ ID, Source, Secret string }
	env.Do(apitest.Request{Method: "POST", Path: "/v1/webhook-sources", Bearer: admin.Token,
		JSON: map[string]string{"source": "scanner"}}).Expect(http.StatusCreated).Decode(&created)
	if !strings.HasPrefix(created.Secret, webhooks.SecretPrefix) || created.Source != "scanner" {
		t.Fatalf("created %+v", created)
	}
	deliver := func(id string) *apitest.Response {
		body, _ := json.Marshal(map[string]any{"id": id, "type": "finding.created",
			"data": map[string]any{"externalId": "F-" + id, "title": "Open bucket"}})
		return env.Do(apitest.Request{Method: "POST", Path: "/webhooks/inbound/scanner", Body: string(body),
			Header: http.Header{webhooks.SignatureHeader: {webhooks.Sign(created.Secret, env.Clock.Now(), body)}}})
	}
	deliver("evt_1").Expect(http.StatusOK)

	list := env.Do(apitest.Request{Method: "GET", Path: "/v1/webhook-sources", Bearer: admin.Token}).Expect(http.StatusOK).Body.String()
	if !strings.Contains(list, created.ID) {
		t.Errorf("the list lacks the source: %s", list)
	}
	secretPart := strings.TrimPrefix(created.Secret, webhooks.SecretPrefix)
	for where, text := range map[string]string{"the list": list, "the logs": env.Logs.String(), "the database": dump(t, env)} {
		if strings.Contains(text, secretPart) {
			t.Errorf("the secret is in %s", where)
		}
	}
	env.Do(apitest.Request{Method: "POST", Path: "/v1/webhook-sources", Bearer: admin.Token,
		JSON: map[string]string{"source": "scanner"}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	env.Do(apitest.Request{Method: "POST", Path: "/v1/webhook-sources", Bearer: admin.Token,
		JSON: map[string]string{"source": "no spaces"}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")

	env.Do(apitest.Request{Method: "DELETE", Path: "/v1/webhook-sources/" + created.ID, Bearer: admin.Token}).Expect(http.StatusNoContent)
	deliver("evt_2").ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
	env.Do(apitest.Request{Method: "DELETE", Path: "/v1/webhook-sources/" + created.ID, Bearer: admin.Token}).
		ExpectProblem(http.StatusNotFound, "NOT_FOUND")
}

// TestKeyedWrites: the routes whose response carries a secret refuse
// Idempotency-Key with 422 and create nothing; the others replay.
func TestKeyedWrites(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	admin := env.User(a.ID, tenants.RoleAdmin)
	count := func(table string) int64 {
		var n int64
		if err := env.App.DB.Table(table).Where("tenant_id = ?", a.ID).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	keys, sources := count("api_keys"), count("webhook_sources")
	env.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Bearer: admin.Token, Header: key("secret-key-1"),
		JSON: map[string]any{"scopes": []string{"risks:read"}}}).ExpectProblem(http.StatusUnprocessableEntity, "IDEMPOTENCY_UNSUPPORTED_ROUTE")
	env.Do(apitest.Request{Method: "POST", Path: "/v1/webhook-sources", Bearer: admin.Token, Header: key("secret-key-2"),
		JSON: map[string]string{"source": "keyed"}}).ExpectProblem(http.StatusUnprocessableEntity, "IDEMPOTENCY_UNSUPPORTED_ROUTE")
	// Without a credential the answer is 401, key or not: the credential is checked
	// before the header (a fuzzer or a client without its token learns nothing else).
	env.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Header: key("secret-key-3"),
		JSON: map[string]any{"scopes": []string{"risks:read"}}}).ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
	env.Do(apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints", Bearer: "not-a-token", Header: key("secret-key-4"),
		JSON: map[string]any{"url": "https://93.184.216.34/x"}}).ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
	if count("api_keys") != keys || count("webhook_sources") != sources {
		t.Errorf("a refused keyed request created something")
	}
	var records int64
	env.App.DB.Table("idempotency_records").Count(&records)
	if records != 0 {
		t.Errorf("%d idempotency records after refused requests", records)
	}

	create := apitest.Request{Method: "POST", Path: "/v1/users", Bearer: admin.Token, Header: key("user-create-1"),
		JSON: map[string]string{"email": "carol@example.com", "password": "password123", "role": "member"}}
	first := env.Do(create).Expect(http.StatusCreated)
	again := env.Do(create).Expect(http.StatusCreated)
	if again.Header().Get("Idempotent-Replayed") != "true" || again.Body.String() != first.Body.String() {
		t.Errorf("replay: %q %s, first %s", again.Header().Get("Idempotent-Replayed"), again.Body.String(), first.Body.String())
	}
	create.JSON = map[string]string{"email": "dave@example.com", "password": "password123", "role": "member"}
	env.Do(create).ExpectProblem(http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	var u struct{ ID string }
	first.Decode(&u)
	del := apitest.Request{Method: "DELETE", Path: "/v1/users/" + u.ID, Bearer: admin.Token, Header: key("user-delete-1")}
	env.Do(del).Expect(http.StatusNoContent)
	if res := env.Do(del).Expect(http.StatusNoContent); res.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("the keyed delete did not replay")
	}
}

// TestLastAdmin: the tenant's last admin can be neither demoted nor removed, and two
// admins removing each other at once leave one.
func TestLastAdmin(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme") // its user is an admin
	first := env.User(a.ID, tenants.RoleAdmin)
	second := env.User(a.ID, tenants.RoleAdmin)
	var origID string
	var page struct{ Data []struct{ ID, Email string } }
	env.Do(apitest.Request{Method: "GET", Path: "/v1/users", Bearer: first.Token}).Expect(http.StatusOK).Decode(&page)
	for _, u := range page.Data {
		if u.Email == a.Email {
			origID = u.ID
		}
	}
	env.Do(apitest.Request{Method: "DELETE", Path: "/v1/users/" + origID, Bearer: first.Token}).Expect(http.StatusNoContent)

	// Two admins remove each other at the same moment: one wins.
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i, pair := range [][2]*apitest.User{{first, second}, {second, first}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = env.Do(apitest.Request{Method: "DELETE", Path: "/v1/users/" + pair[1].ID, Bearer: pair[0].Token}).Code
		}()
	}
	wg.Wait()
	if !(codes[0] == 204) != (codes[1] == 204) {
		t.Fatalf("mutual removal → %v, want exactly one 204", codes)
	}
	last := first
	if codes[0] != 204 {
		last = second
	}
	n, _, err := env.App.Tenants.Users(context.Background(), a.ID, tenants.Page{Limit: 10})
	if err != nil || len(n) != 1 || n[0].ID != last.ID || n[0].Role != tenants.RoleAdmin {
		t.Fatalf("users after the race: %+v, %v", n, err)
	}
	demote := env.Do(apitest.Request{Method: "PATCH", Path: "/v1/users/" + last.ID, Bearer: last.Token,
		JSON: map[string]string{"role": "member"}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	if !strings.Contains(demote.Body.String(), `"field":"role"`) {
		t.Errorf("demotion refusal does not name role: %s", demote.Body.String())
	}
	remove := env.Do(apitest.Request{Method: "DELETE", Path: "/v1/users/" + last.ID, Bearer: last.Token}).
		ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	if !strings.Contains(remove.Body.String(), last.ID) {
		t.Errorf("removal refusal does not name the user: %s", remove.Body.String())
	}
	// With a second admin, demotion works and holds from the next request on.
	other := env.User(a.ID, tenants.RoleAdmin)
	env.Do(apitest.Request{Method: "PATCH", Path: "/v1/users/" + other.ID, Bearer: last.Token,
		JSON: map[string]string{"role": "member"}}).Expect(http.StatusOK)
	env.Do(apitest.Request{Method: "GET", Path: "/v1/users", Bearer: other.Token}).ExpectProblem(http.StatusForbidden, "FORBIDDEN")
	env.Do(apitest.Request{Method: "PATCH", Path: "/v1/users/" + other.ID, Bearer: last.Token,
		JSON: map[string]string{"role": "owner"}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
}
