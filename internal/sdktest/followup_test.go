package sdktest_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/tenants"
	riskapi "github.com/riskapi/riskapi/sdk"
)

// TestRegisterInTimeThroughTheSDK: reviews, actions (with If-Match) and
// acceptances through the Go SDK against a real server.
func TestRegisterInTimeThroughTheSDK(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	srv := httptest.NewServer(env.App.Echo)
	t.Cleanup(srv.Close)
	a := env.Tenant("Acme")
	owner := env.User(a.ID, tenants.RoleMember)
	c, err := riskapi.NewClient(a.Key, riskapi.WithBaseURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{Title: "t", ReviewEvery: riskapi.RiskReviewEvery("P1M")})
	if err != nil || r.ReviewEvery == nil || *r.ReviewEvery != "P1M" {
		t.Fatalf("create = %+v, %v; want reviewEvery P1M", r, err)
	}
	rv, err := c.Reviews.Create(ctx, r.ID, &riskapi.ReviewCreateParams{Outcome: "unchanged", Note: "fine"})
	y, m, d := env.Clock.Now().UTC().Date()
	want := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).AddDate(0, 1, 0).Format("2006-01-02")
	if err != nil || rv.NextReviewDate == nil || *rv.NextReviewDate != want || !rv.Livemode {
		t.Fatalf("review = %+v, %v; want next review %s", rv, err, want)
	}
	if reviews, err := riskapi.Collect(c.Reviews.List(ctx, r.ID, nil)); err != nil || len(reviews) != 1 {
		t.Errorf("reviews = %d, %v; want 1", len(reviews), err)
	}
	act, err := c.Actions.Create(ctx, r.ID, &riskapi.ActionCreateParams{Title: "fix", OwnerID: owner.ID, DueDate: "2030-01-01"})
	if err != nil {
		t.Fatal(err)
	}
	done := riskapi.ActionStatus("done")
	if _, err := c.Actions.Update(ctx, act.ID, &riskapi.ActionUpdateParams{Status: &done, Params: riskapi.Params{IfMatch: act.ETag()}}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Actions.Update(ctx, act.ID, &riskapi.ActionUpdateParams{Title: riskapi.Ptr("x"), Params: riskapi.Params{IfMatch: act.ETag()}})
	if !errors.Is(err, riskapi.ErrPreconditionFailed) {
		t.Errorf("a stale If-Match: %v, want PRECONDITION_FAILED", err)
	}
	if got, err := c.Actions.Get(ctx, act.ID); err != nil || got.Status != done || got.Version != 2 {
		t.Errorf("Actions.Get = %+v, %v; want the done action at version 2", got, err)
	}
	if _, err := c.Actions.Get(ctx, "act_0193b2c4d5e67f8091a2b3c4d5e6f708"); !errors.Is(err, riskapi.ErrNotFound) {
		t.Errorf("Actions.Get of no action: %v, want NOT_FOUND", err)
	}
	if acts, err := riskapi.Collect(c.Actions.List(ctx, &riskapi.ActionListParams{OwnerID: owner.ID, Status: done})); err != nil || len(acts) != 1 {
		t.Errorf("done actions of the owner = %d, %v; want 1", len(acts), err)
	}
	until := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).AddDate(0, 3, 0).Format("2006-01-02")
	acc, err := c.Acceptances.Request(ctx, r.ID, &riskapi.AcceptanceCreateParams{Justification: "cheap", ValidUntil: until})
	if err != nil || acc.Status != "pending" || acc.RequestedBy.Type != "api_key" {
		t.Fatalf("acceptance = %+v, %v", acc, err)
	}
	if got, err := c.Acceptances.Get(ctx, acc.ID); err != nil || got.ID != acc.ID || got.Status != "pending" {
		t.Errorf("Acceptances.Get = %+v, %v", got, err)
	}
	if accs, err := riskapi.Collect(c.Acceptances.List(ctx, &riskapi.AcceptanceListParams{Status: "pending"})); err != nil || len(accs) != 1 {
		t.Errorf("pending acceptances = %d, %v; want 1", len(accs), err)
	}
}
