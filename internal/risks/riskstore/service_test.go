package riskstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/attachments"
	"github.com/riskapi/riskapi/internal/attachments/attachmentstore"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskstore"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/tenants/tenantstore"
)

// These tests run risks.Service on a real database with no Idempotency-Key anywhere:
// a write of several statements is one unit of work whatever the request carries.

var errLate = errors.New("failed after writing")

// lateFailingDependent deletes its rows, then fails, as a store losing its
// connection between two statements would.
type lateFailingDependent struct{ risks.Dependent }

func (d lateFailingDependent) DeleteByRisk(ctx context.Context, tenantID, riskID string) (int, error) {
	if _, err := d.Dependent.DeleteByRisk(ctx, tenantID, riskID); err != nil {
		return 0, err
	}
	return 0, errLate
}

// lateFailingStore stores the update, then fails.
type lateFailingStore struct{ risks.Store }

func (s lateFailingStore) Update(ctx context.Context, before, after *risks.Risk) error {
	if err := s.Store.Update(ctx, before, after); err != nil {
		return err
	}
	return errLate
}

type serviceEnv struct {
	db     *database.DB
	tenant string
	risks  *riskstore.Store
	atts   *attachmentstore.Store
	risk   *risks.Risk
}

func newServiceEnv(t *testing.T) *serviceEnv {
	t.Helper()
	db := dbtest.Open(t)
	ctx := context.Background()
	ten, err := tenants.NewService(tenantstore.New(db.DB), 4, nil).CreateTenant(ctx, "Acme")
	if err != nil {
		t.Fatal(err)
	}
	env := &serviceEnv{db: db, tenant: ten.ID, risks: riskstore.New(db.DB, &changeLog{}), atts: attachmentstore.New(db, &changeLog{})}
	now := time.Now().UTC().Truncate(time.Microsecond)
	env.risk, err = risks.New(ids.New(ids.Risk), ten.ID, risks.Fields{Title: str("before")}, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.risks.Create(ctx, env.risk); err != nil {
		t.Fatal(err)
	}
	a, err := attachments.New(ids.New(ids.Attachment), ten.ID, env.risk.ID,
		attachments.Input{Filename: "a.txt", ContentType: "text/plain", Size: 1, SHA256: "00"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.atts.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	return env
}

func (env *serviceEnv) attachmentCount(t *testing.T) int {
	t.Helper()
	as, _, err := env.atts.List(context.Background(), env.tenant, env.risk.ID, attachments.Filter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	return len(as)
}

func TestServiceDeleteRemovesTheRiskAndItsAttachmentsTogether(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := newServiceEnv(t)
	tx := database.NewRunner(env.db.DB)

	failing := &risks.Service{Store: env.risks, Tx: tx, Dependents: []risks.Dependent{lateFailingDependent{env.atts}}}
	if err := failing.Delete(ctx, env.tenant, env.risk.ID, nil); !errors.Is(err, errLate) {
		t.Fatalf("Delete: %v, want the dependent's error", err)
	}
	if _, err := env.risks.Get(ctx, env.tenant, env.risk.ID); err != nil {
		t.Fatalf("after a failed cascade the risk is gone: %v", err)
	}
	if n := env.attachmentCount(t); n != 1 {
		t.Fatalf("after a failed cascade %d attachments, want 1", n)
	}

	svc := &risks.Service{Store: env.risks, Tx: tx, Dependents: []risks.Dependent{env.atts}}
	if err := svc.Delete(ctx, env.tenant, env.risk.ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := env.risks.Get(ctx, env.tenant, env.risk.ID); !errors.Is(err, risks.ErrNotFound) {
		t.Fatalf("after Delete: %v, want ErrNotFound", err)
	}
	if n := env.attachmentCount(t); n != 0 {
		t.Fatalf("after Delete %d attachments, want 0", n)
	}
	if err := svc.Delete(ctx, env.tenant, env.risk.ID, nil); !errors.Is(err, risks.ErrNotFound) {
		t.Fatalf("second Delete: %v, want ErrNotFound", err)
	}
}

func TestServiceUpdateIsOneUnitOfWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := newServiceEnv(t)
	tx := database.NewRunner(env.db.DB)
	retitle := func(title string) func(*risks.Risk) error {
		return func(r *risks.Risk) error {
			return r.Apply(risks.Update{Title: &title}, time.Now().UTC().Truncate(time.Microsecond))
		}
	}

	failing := &risks.Service{Store: lateFailingStore{env.risks}, Tx: tx}
	if _, err := failing.Update(ctx, env.tenant, env.risk.ID, nil, retitle("half")); !errors.Is(err, errLate) {
		t.Fatalf("Update: %v, want the store's error", err)
	}
	if r, err := env.risks.Get(ctx, env.tenant, env.risk.ID); err != nil || r.Title != "before" {
		t.Fatalf("after a failed update: %v %v, want the risk unchanged", r, err)
	}

	svc := &risks.Service{Store: env.risks, Tx: tx}
	invalid := errors.New("refused")
	if _, err := svc.Update(ctx, env.tenant, env.risk.ID, nil, func(*risks.Risk) error { return invalid }); err != invalid {
		t.Fatalf("Update: %v, want change's error unchanged", err)
	}
	got, err := svc.Update(ctx, env.tenant, env.risk.ID, nil, retitle("after"))
	if err != nil || got.Title != "after" {
		t.Fatalf("Update: %v %v", got, err)
	}
	if r, err := env.risks.Get(ctx, env.tenant, env.risk.ID); err != nil || r.Title != "after" || !r.UpdatedAt.Equal(got.UpdatedAt) {
		t.Fatalf("stored %v %v, want what Update returned", r, err)
	}
	if _, err := svc.Update(ctx, env.tenant, ids.New(ids.Risk), nil, retitle("x")); !errors.Is(err, risks.ErrNotFound) {
		t.Fatalf("Update of a missing risk: %v, want ErrNotFound", err)
	}
}

// Updates that run at once each read the risk, change it and store every field: unless
// the read waits for the others' commits, the last writer silently undoes the rest
// (a PATCH of the owner losing a concurrent PATCH of the title).
func TestConcurrentUpdatesLoseNoChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := newServiceEnv(t)
	svc := &risks.Service{Store: env.risks, Tx: database.NewRunner(env.db.DB)}
	const writers = 12
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := svc.Update(ctx, env.tenant, env.risk.ID, nil, func(r *risks.Risk) error {
				d := r.Description + fmt.Sprintf("[%d]", i)
				return r.Apply(risks.Update{Description: &d}, time.Now().UTC().Truncate(time.Microsecond))
			})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
	}
	r, err := env.risks.Get(ctx, env.tenant, env.risk.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i := range writers {
		if !strings.Contains(r.Description, fmt.Sprintf("[%d]", i)) {
			t.Errorf("update %d was lost: description %q", i, r.Description)
		}
	}
}
