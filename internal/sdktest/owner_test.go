package sdktest_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/apiversion"
	"github.com/riskapi/riskapi/internal/tenants"
	riskapi "github.com/riskapi/riskapi/sdk"
)

// TestSDKOwnerObjectOnAnOldPin: the Go SDK names the newest version, so a tenant
// still pinned to 2026-12-01 answers it owners as objects, while a client without
// a version reads the same risk's owner as the user's email (docs/api-versions.md).
func TestSDKOwnerObjectOnAnOldPin(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	srv := httptest.NewServer(env.App.Echo)
	t.Cleanup(srv.Close)
	a := env.TenantAt("Acme", apiversion.V20261201)
	u := env.User(a.ID, tenants.RoleMember)
	c, err := riskapi.NewClient(a.Key, riskapi.WithBaseURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{Title: "t", Owner: &riskapi.RiskOwnerParams{UserID: &u.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Owner == nil || r.Owner.UserID == nil || *r.Owner.UserID != u.ID || r.Owner.Name != u.Email {
		t.Fatalf("owner = %+v, want the user %s with their email", r.Owner, u.ID)
	}
	if v := r.LastResponse.Header.Get("Riskapi-Version"); v != "2027-01-15" {
		t.Errorf("answered in %q, want 2027-01-15", v)
	}
	page, err := c.Risks.ListPage(ctx, &riskapi.RiskListParams{RiskFilter: riskapi.RiskFilter{OwnerID: &u.ID}})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != r.ID {
		t.Errorf("ownerId filter = %+v, %v; want the one risk", page, err)
	}
	old := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + r.ID, Bearer: a.Key}).Expect(http.StatusOK).Map()
	if old["owner"] != u.Email {
		t.Errorf("the pinned version reads owner %#v, want the email %q", old["owner"], u.Email)
	}

	named, err := c.Risks.Update(ctx, r.ID, &riskapi.RiskUpdateParams{Owner: &riskapi.RiskOwnerParams{Name: riskapi.Ptr("Security team")}})
	if err != nil || named.Owner.UserID != nil || named.Owner.Name != "Security team" {
		t.Errorf("name owner = %+v, %v", named, err)
	}
	_, err = c.Risks.Update(ctx, r.ID, &riskapi.RiskUpdateParams{Owner: &riskapi.RiskOwnerParams{UserID: riskapi.Ptr("usr_nobody")}})
	if !errors.Is(err, riskapi.ErrOwnerUserUnknown) {
		t.Errorf("an unknown user: %v, want OWNER_USER_UNKNOWN", err)
	}
}
