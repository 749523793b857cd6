package audithttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/audit"
	"github.com/riskapi/riskapi/internal/audit/auditstore"
	"github.com/riskapi/riskapi/internal/config"
)

func allowPrivate(c *config.Config) { c.Outbound.AllowPrivate = true }

// admin is a tenant with its admin signed in.
type admin struct {
	*apitest.Tenant
	Token, UserID string
}

func newAdmin(t testing.TB, env *apitest.Env, name string) *admin {
	t.Helper()
	a := env.Tenant(name)
	tok := apitest.Login(t, env, a).Token
	var me struct {
		User struct{ ID string } `json:"user"`
	}
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/me", Bearer: tok}).Expect(http.StatusOK).Decode(&me)
	return &admin{Tenant: a, Token: tok, UserID: me.User.ID}
}

// entriesAfter reads the tenant's entries after the one with ID after ("" for all),
// oldest first, straight from the store.
func entriesAfter(t testing.TB, env *apitest.Env, tenantID, after string) []*audit.Entry {
	t.Helper()
	es, _, err := auditstore.New(env.App.DB.DB).List(context.Background(), tenantID,
		audit.Filter{After: after, OldestFirst: true, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// lastID is the ID of the tenant's newest entry, "" when none.
func lastID(t testing.TB, env *apitest.Env, tenantID string) string {
	t.Helper()
	es, _, err := auditstore.New(env.App.DB.DB).List(context.Background(), tenantID, audit.Filter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) == 0 {
		return ""
	}
	return es[0].ID
}

// createRisk creates a risk through /v2 and returns its ID.
func createRisk(t testing.TB, env *apitest.Env, key, title string) string {
	t.Helper()
	var r struct{ ID string }
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: key,
		JSON: map[string]any{"title": title}}).Expect(http.StatusCreated).Decode(&r)
	return r.ID
}

// page is one page of entries as the API returns them.
type page struct {
	Data       []map[string]any `json:"data"`
	HasMore    bool             `json:"hasMore"`
	NextCursor *string          `json:"nextCursor"`
}

func getPage(t testing.TB, env *apitest.Env, bearer, path string) page {
	t.Helper()
	var p page
	env.Do(apitest.Request{Method: http.MethodGet, Path: path, Bearer: bearer}).Expect(http.StatusOK).Decode(&p)
	return p
}

func jsonOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
