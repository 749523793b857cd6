package sdktest_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	riskapi "github.com/riskapi/riskapi/sdk"
)

// TestAuditLogAgainstRealServer: AuditLog.List pages the tenant's entries newest
// first (filtered when asked) with actor, target and changes; History walks a
// deleted risk's entries oldest first; a key without audit:read gets a typed 403.
func TestAuditLogAgainstRealServer(t *testing.T) {
	t.Parallel()
	s := startReal(t)
	ctx := context.Background()
	c := s.client(t, s.acme.Key, s.srv.URL, newStepClock())
	r, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{Title: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Risks.Update(ctx, r.ID, &riskapi.RiskUpdateParams{Title: riskapi.Ptr("b")}); err != nil {
		t.Fatal(err)
	}
	if err := c.Risks.Delete(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	all, err := riskapi.Collect(c.AuditLog.List(ctx, &riskapi.AuditListParams{TargetID: r.ID, Limit: 1}))
	if err != nil || len(all) != 3 || all[0].Action != "risk.deleted" || all[2].Action != "risk.created" {
		t.Fatalf("List: %d entries (%v), want 3 newest first", len(all), err)
	}
	upd := all[1]
	if upd.Actor.Type != "api_key" || upd.Actor.ID != s.acme.KeyID || upd.Target.ID != r.ID || upd.RequestID == "" ||
		string(upd.Changes["title"].From) != `"a"` || string(upd.Changes["title"].To) != `"b"` {
		t.Errorf("risk.updated: %+v", upd)
	}
	updated, err := riskapi.Collect(c.AuditLog.List(ctx, &riskapi.AuditListParams{Action: "risk.updated"}))
	if err != nil || len(updated) != 1 {
		t.Fatalf("List risk.updated: %d (%v)", len(updated), err)
	}
	hist, err := riskapi.Collect(c.AuditLog.History(ctx, r.ID, 2))
	if err != nil || len(hist) != 3 || hist[0].Action != "risk.created" || hist[2].Action != "risk.deleted" {
		t.Fatalf("History: %d (%v), want 3 oldest first", len(hist), err)
	}
	ro := s.client(t, s.acme.ReadKey, s.srv.URL, newStepClock())
	var apiErr *riskapi.Error
	if _, err := riskapi.Collect(ro.AuditLog.List(ctx, nil)); !errors.As(err, &apiErr) || apiErr.Status != http.StatusForbidden {
		t.Fatalf("List without audit:read: %v, want 403", err)
	}
}
