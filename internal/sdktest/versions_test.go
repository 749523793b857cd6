package sdktest_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	riskapi "github.com/riskapi/riskapi/sdk"
)

// TestRealIfMatchAndModify: against the real server, a write with a stale
// Params.IfMatch fails with a *StaleRiskError carrying the stored risk and
// changes nothing; Modify redoes its change on the newer version another writer
// made in between, so both changes are kept.
func TestRealIfMatchAndModify(t *testing.T) {
	t.Parallel()
	s := startReal(t)
	c := s.client(t, s.acme.Key, s.srv.URL, newStepClock())
	ctx := context.Background()
	r, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{Title: "t", Owner: name("alice")})
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != 1 || r.ETag() != `"1"` || r.LastResponse.Header.Get("ETag") != `"1"` {
		t.Fatalf("created risk: version %d, ETag() %s, header %q", r.Version, r.ETag(), r.LastResponse.Header.Get("ETag"))
	}
	theirs, err := c.Risks.Update(ctx, r.ID, &riskapi.RiskUpdateParams{Title: riskapi.Ptr("theirs")})
	if err != nil || theirs.Version != 2 {
		t.Fatalf("update: %+v, %v", theirs, err)
	}

	stale := &riskapi.RiskUpdateParams{Owner: name("bob")}
	stale.IfMatch = r.ETag()
	_, err = c.Risks.Update(ctx, r.ID, stale)
	var se *riskapi.StaleRiskError
	if !errors.As(err, &se) || !errors.Is(err, riskapi.ErrPreconditionFailed) || se.Err.Status != http.StatusPreconditionFailed {
		t.Fatalf("stale update: %v, want a *StaleRiskError that is ErrPreconditionFailed", err)
	}
	if se.Current == nil || se.Current.Version != 2 || se.Current.Title != "theirs" || se.Current.Owner.Name != "alice" {
		t.Fatalf("Current = %+v, want the stored version 2", se.Current)
	}
	del := &riskapi.RiskDeleteParams{}
	del.IfMatch = r.ETag()
	if _, err := c.Risks.DeleteWithParams(ctx, r.ID, del); !errors.As(err, &se) {
		t.Fatalf("stale delete: %v, want a *StaleRiskError", err)
	}

	// Modify: another writer changes the title between Modify's read and its
	// write; the first write is refused and the change is made again on top.
	calls := 0
	got, err := c.Risks.Modify(ctx, r.ID, func(cur *riskapi.Risk) (*riskapi.RiskUpdateParams, error) {
		calls++
		if calls == 1 {
			if _, err := c.Risks.Update(ctx, r.ID, &riskapi.RiskUpdateParams{Title: riskapi.Ptr("newer")}); err != nil {
				return nil, err
			}
		}
		return &riskapi.RiskUpdateParams{Owner: name(cur.Owner.Name + "+bob")}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || got.Title != "newer" || got.Owner.Name != "alice+bob" || got.Version != 4 {
		t.Fatalf("Modify after %d calls: %+v; want both changes kept at version 4 after 2 calls", calls, got)
	}
	sentinel := errors.New("no change wanted")
	if _, err := c.Risks.Modify(ctx, r.ID, func(*riskapi.Risk) (*riskapi.RiskUpdateParams, error) { return nil, sentinel }); err != sentinel {
		t.Fatalf("Modify returned %v, want change's error", err)
	}
}

// name is a name owner for a write.
func name(n string) *riskapi.RiskOwnerParams { return &riskapi.RiskOwnerParams{Name: &n} }
