package sdktest_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	riskapi "github.com/riskapi/riskapi/sdk"
)

// TestEventsAgainstRealServer: Events.List pages the tenant's events newest first
// (filtered by type when asked), Events.Get returns one with its object, and a key
// without events:read gets a typed 403.
func TestEventsAgainstRealServer(t *testing.T) {
	t.Parallel()
	s := startReal(t)
	ctx := context.Background()
	c := s.client(t, s.acme.Key, s.srv.URL, newStepClock())
	var ids []string
	for _, title := range []string{"a", "b", "c"} {
		r, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{Title: title})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	if _, err := c.Risks.Update(ctx, ids[0], &riskapi.RiskUpdateParams{Title: riskapi.Ptr("a2")}); err != nil {
		t.Fatal(err)
	}
	all, err := riskapi.Collect(c.Events.List(ctx, &riskapi.EventListParams{Limit: 2}))
	if err != nil || len(all) != 4 || all[0].Type != riskapi.EventRiskUpdated {
		t.Fatalf("List: %d events (%v), want 4 newest first", len(all), err)
	}
	created, err := riskapi.Collect(c.Events.List(ctx, &riskapi.EventListParams{Type: riskapi.EventRiskCreated}))
	if err != nil || len(created) != 3 {
		t.Fatalf("List risk.created: %d (%v)", len(created), err)
	}
	for i, e := range created {
		var r riskapi.Risk
		if err := e.Object(&r); err != nil || r.ID != ids[2-i] || e.Request.IdempotencyKey == "" {
			t.Errorf("event %d about %s (key %q, %v), want %s with the SDK's idempotency key", i, r.ID, e.Request.IdempotencyKey, err, ids[2-i])
		}
	}
	got, err := c.Events.Get(ctx, all[0].ID)
	if err != nil || got.ID != all[0].ID || got.Type != riskapi.EventRiskUpdated {
		t.Fatalf("Get: %+v %v", got, err)
	}
	ro := s.client(t, s.acme.ReadKey, s.srv.URL, newStepClock())
	var apiErr *riskapi.Error
	if _, err := ro.Events.Get(ctx, all[0].ID); !errors.As(err, &apiErr) || apiErr.Status != http.StatusForbidden {
		t.Fatalf("Get without events:read: %v, want 403", err)
	}
}
