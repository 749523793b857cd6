package server_test

import (
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/tenants"
)

// TestChangeOfAnotherAuthorWaits: a change naming its author (Riskapi-Author, as
// the dashboard's queued changes do) sent with another user's session is 401 and
// runs nothing: no risk, no audit entry, no idempotency record, so the author's
// own retry with the same key later creates the risk once.
func TestChangeOfAnotherAuthorWaits(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	acme := env.Tenant("Acme")
	bob, err := env.App.Tenants.CreateUser(t.Context(), acme.ID, "bob@example.com", "correct horse battery", tenants.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	ada := apitest.Login(t, env, acme)
	var me struct{ User struct{ ID string } }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/me", Bearer: ada.Token}).Expect(http.StatusOK).Decode(&me)
	// The tab still believes Ada is signed in; the cookie is Bob's now.
	asBob := apitest.LoginAs(t, env, "bob@example.com", "correct horse battery")
	send := func(s apitest.Session, author, key string) *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/risks", JSON: map[string]any{"title": "Ada's risk"},
			Header: http.Header{"Cookie": {s.Cookie.String()}, "Idempotency-Key": {key}, "Riskapi-Author": {author}}})
	}
	res := send(asBob, me.User.ID, "queued-change-1").Expect(http.StatusUnauthorized)
	if code := res.ProblemCode(); code != "UNAUTHENTICATED" {
		t.Fatalf("code %q, want UNAUTHENTICATED", code)
	}
	if n := len(risksOf(t, env, acme.Key)); n != 0 {
		t.Fatalf("%d risks after a change sent under another user, want 0", n)
	}
	var log struct{ Data []any }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/audit-log?action=risk.created", Bearer: acme.Key}).
		Expect(http.StatusOK).Decode(&log)
	if len(log.Data) != 0 {
		t.Fatalf("audit log holds %d risk.created entries, want none", len(log.Data))
	}
	// Once Ada is back her change runs, once: no record held its key.
	if r := send(ada, me.User.ID, "queued-change-1").Expect(http.StatusCreated); r.Header().Get("Idempotent-Replayed") == "true" {
		t.Fatal("Ada's change was replayed, want it run now")
	}
	if r := send(ada, me.User.ID, "queued-change-1").Expect(http.StatusCreated); r.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatal("Ada's retry was not replayed")
	}
	// Bob's own changes go through.
	send(asBob, bob.ID, "bobs-change-1").Expect(http.StatusCreated)
	if n := len(risksOf(t, env, acme.Key)); n != 2 {
		t.Fatalf("%d risks, want Ada's and Bob's", n)
	}
}

func risksOf(t *testing.T, env *apitest.Env, key string) []any {
	t.Helper()
	var p struct{ Data []any }
	apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/v2/risks?limit=100", Bearer: key}).Expect(http.StatusOK).Decode(&p)
	return p.Data
}
