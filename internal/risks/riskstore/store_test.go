package riskstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskstore"
	"github.com/riskapi/riskapi/internal/risks/risktest"
	"github.com/riskapi/riskapi/internal/risks/riskview"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/tenants/tenantstore"
)

func str(s string) *string { return &s }
func num(n int) *int       { return &n }

// TestRoundTrip: what is stored reads back exactly — every field, and the
// timestamps the domain set (not the database's own clock).
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	ctx := context.Background()
	svc := tenants.NewService(tenantstore.New(db.DB, &changeLog{}), 4, nil)
	a, err := svc.CreateTenant(ctx, "Acme")
	if err != nil {
		t.Fatal(err)
	}
	b, err := svc.CreateTenant(ctx, "Beta")
	if err != nil {
		t.Fatal(err)
	}
	rec := &changeLog{}
	s := riskstore.New(db.DB, rec)

	created := time.Date(2020, 2, 3, 4, 5, 6, 123456000, time.UTC) // far from now, microseconds
	// Every field set (risktest.Full), so that a field the row type or its columns
	// lack reads back different.
	r, err := risktest.Full(ids.New(ids.Risk), a.ID, 1, created)
	if err != nil {
		t.Fatal(err)
	}
	r.Metadata["a.b-c_d"] = "é" // punctuation in keys, and a value beyond ASCII
	if err := s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, a.ID, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("after Create (-stored +read):\n%s", diff)
	}

	updated := created.Add(90 * time.Minute)
	before := *got
	if err := got.Apply(risks.Update{Status: statusPtr(risks.StatusClosed), Likelihood: &risks.Nullable[int]{Null: true}}, updated); err != nil {
		t.Fatal(err)
	}
	// The author comes from the context (authentication puts the principal there).
	author := changes.Actor{Type: changes.ActorUser, ID: "usr_1"}
	if err := s.Update(changes.WithActor(ctx, author), &before, got); err != nil {
		t.Fatal(err)
	}
	again, err := s.Get(ctx, a.ID, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, again); diff != "" {
		t.Errorf("after Update (-stored +read):\n%s", diff)
	}
	if byExt, err := s.GetByExternalID(ctx, a.ID, *r.ExternalID); err != nil || byExt.ID != r.ID {
		t.Errorf("GetByExternalID = %v, %v", byExt, err)
	}

	// Another tenant reaches none of it.
	other := *again
	other.TenantID, other.Title = b.ID, "taken over"
	for name, err := range map[string]error{
		"Get":             func() error { _, err := s.Get(ctx, b.ID, r.ID); return err }(),
		"GetByExternalID": func() error { _, err := s.GetByExternalID(ctx, b.ID, *r.ExternalID); return err }(),
		"Update":          s.Update(ctx, &other, &other),
		"Delete":          s.Delete(ctx, &other),
	} {
		if !errors.Is(err, risks.ErrNotFound) {
			t.Errorf("%s as another tenant = %v, want ErrNotFound", name, err)
		}
	}
	if list, more, err := s.List(ctx, b.ID, risks.Filter{Limit: 10}); err != nil || len(list) != 0 || more {
		t.Errorf("another tenant's list: %v, %v, %v", list, more, err)
	}
	final, err := s.Get(ctx, a.ID, r.ID)
	if err != nil || final.Title != r.Title {
		t.Errorf("the risk after another tenant's attempts: %+v, %v", final, err)
	}

	if err := s.Delete(ctx, again); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, a.ID, r.ID); !errors.Is(err, risks.ErrNotFound) {
		t.Errorf("Get after Delete = %v", err)
	}
	if err := s.Delete(ctx, again); !errors.Is(err, risks.ErrNotFound) {
		t.Errorf("second Delete = %v", err)
	}
	if err := s.Update(ctx, again, again); !errors.Is(err, risks.ErrNotFound) {
		t.Errorf("Update after Delete = %v", err)
	}

	// Each write that took effect recorded exactly one change, with the risk as the
	// API shows it before and after; the refused ones recorded nothing.
	want := []changes.Change{
		{TenantID: a.ID, Actor: changes.Actor{Type: changes.ActorSystem}, Action: changes.RiskCreated,
			Target: changes.Target{Type: "risk", ID: r.ID}, After: riskview.Of(r)},
		{TenantID: a.ID, Actor: author, Action: changes.RiskUpdated,
			Target: changes.Target{Type: "risk", ID: r.ID}, Before: riskview.Of(&before), After: riskview.Of(got)},
		{TenantID: a.ID, Actor: changes.Actor{Type: changes.ActorSystem}, Action: changes.RiskDeleted,
			Target: changes.Target{Type: "risk", ID: r.ID}, Before: riskview.Of(again)},
	}
	if diff := cmp.Diff(want, rec.all()); diff != "" {
		t.Errorf("recorded changes (-want +got):\n%s", diff)
	}
}

// A write and its record are one unit of work: when recording fails the write is
// gone too, whether the store opened the transaction or joined the caller's.
func TestRecordingFailureUndoesTheWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, rec, s, r := storedRisk(t, "kept")
	rec.fail = errors.New("recorder down")
	after := *r
	after.Title = "lost"
	if err := s.Update(ctx, r, &after); !errors.Is(err, rec.fail) {
		t.Fatalf("Update = %v, want the recorder's error", err)
	}
	if err := database.NewRunner(db.DB).InTx(ctx, func(ctx context.Context) error { return s.Delete(ctx, r) }); !errors.Is(err, rec.fail) {
		t.Fatalf("Delete in a transaction = %v, want the recorder's error", err)
	}
	fresh, err := risks.New(ids.New(ids.Risk), r.TenantID, risks.Fields{Title: str("never")}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, fresh); !errors.Is(err, rec.fail) {
		t.Fatalf("Create = %v, want the recorder's error", err)
	}
	if got, err := s.Get(ctx, r.TenantID, r.ID); err != nil || got.Title != "kept" {
		t.Errorf("after failed recordings the risk is %+v, %v; want it unchanged", got, err)
	}
	if _, err := s.Get(ctx, r.TenantID, fresh.ID); !errors.Is(err, risks.ErrNotFound) {
		t.Errorf("a creation whose recording failed is stored: %v", err)
	}
	if err := riskstore.New(db.DB, nil).Create(ctx, fresh); !errors.Is(err, changes.ErrNoRecorder) {
		t.Errorf("a store without a recorder wrote: %v", err)
	}
}

func statusPtr(s risks.Status) *risks.Status { return &s }

// storedRisk opens a fresh database with a tenant and a store recording into a
// changeLog, and creates one risk titled title through it.
func storedRisk(t *testing.T, title string) (*database.DB, *changeLog, *riskstore.Store, *risks.Risk) {
	t.Helper()
	db := dbtest.Open(t)
	ctx := context.Background()
	ten, err := tenants.NewService(tenantstore.New(db.DB, &changeLog{}), 4, nil).CreateTenant(ctx, "Acme")
	if err != nil {
		t.Fatal(err)
	}
	rec := &changeLog{}
	s := riskstore.New(db.DB, rec)
	r, err := risks.New(ids.New(ids.Risk), ten.ID, risks.Fields{Title: &title}, time.Now().UTC().Truncate(time.Microsecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	return db, rec, s, r
}

// TestWritesOnlyOverTheVersionRead: Update and Delete write only over the version
// their caller read, so a caller that read without the row lock cannot overwrite a
// newer version unseen: risks.ErrVersionChanged, and nothing changes.
func TestWritesOnlyOverTheVersionRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, _, s, r := storedRisk(t, "v1")
	v2 := *r
	v2.Title, v2.Version = "v2", 2
	if err := s.Update(ctx, r, &v2); err != nil {
		t.Fatal(err)
	}
	stale := v2
	stale.Title, stale.Version = "stale", 2
	if err := s.Update(ctx, r, &stale); !errors.Is(err, risks.ErrVersionChanged) {
		t.Errorf("Update over version 1 of a risk at 2 = %v, want ErrVersionChanged", err)
	}
	if err := s.Delete(ctx, r); !errors.Is(err, risks.ErrVersionChanged) {
		t.Errorf("Delete of version 1 of a risk at 2 = %v, want ErrVersionChanged", err)
	}
	if got, err := s.Get(ctx, r.TenantID, r.ID); err != nil || got.Title != "v2" || got.Version != 2 {
		t.Errorf("after refused writes: %+v, %v; want version 2 unchanged", got, err)
	}
}
