package riskstore_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

// fieldsEnv is a fresh database with one tenant, its risk store and the service over it.
type fieldsEnv struct {
	db     *database.DB
	tenant string
	store  *riskstore.Store
	svc    *risks.Service
	now    time.Time
}

func newFieldsEnv(t *testing.T) *fieldsEnv {
	t.Helper()
	db := dbtest.Open(t)
	ten, err := tenants.NewService(tenantstore.New(db.DB, &changeLog{}), 4, nil).CreateTenant(context.Background(), "Acme")
	if err != nil {
		t.Fatal(err)
	}
	s := riskstore.New(db.DB, &changeLog{})
	return &fieldsEnv{db: db, tenant: ten.ID, store: s, svc: &risks.Service{Store: s, Tx: database.NewRunner(db.DB), Owners: fieldsUsers{}},
		now: time.Date(2021, 6, 7, 8, 9, 10, 123456000, time.UTC)}
}

// full is risktest.Full of variant n in env's tenant, with a new ID.
func (env *fieldsEnv) full(t *testing.T, n int) *risks.Risk {
	t.Helper()
	r, err := risktest.Full(ids.New(ids.Risk), env.tenant, n, env.now)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// readsBack fails unless the store reads want back exactly.
func (env *fieldsEnv) readsBack(t *testing.T, path string, want *risks.Risk) {
	t.Helper()
	got, err := env.store.Get(context.Background(), env.tenant, want.ID)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s lost a field (-written +read):\n%s", path, diff)
	}
}

// TestEveryWriteKeepsEveryField: each way a risk is written — Create, the service's
// Update (PATCH, PUT, inbound webhooks), CreateMany (imports) — stores every field of
// risks.Risk, each set to a value of its own (risktest.Full), so a column a write
// leaves out reads back as its old value or its zero and fails here. A field added to
// the domain is filled without being named in this test.
func TestEveryWriteKeepsEveryField(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := newFieldsEnv(t)

	created := env.full(t, 1)
	if err := env.store.Create(ctx, created); err != nil {
		t.Fatal(err)
	}
	env.readsBack(t, "Create", created)

	// Every field changes but those set once at creation, so that a column Update
	// leaves out reads back as before.
	later := env.now.Add(time.Hour)
	updated, err := env.svc.Update(ctx, env.tenant, created.ID, nil, func(r *risks.Risk) error {
		if err := r.Apply(risktest.Update(2), later); err != nil {
			return err
		}
		ext := "ext-2"
		r.ExternalID = &ext
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if same := risktest.Same(*created, *updated); !slices.Equal(same, []string{"ID", "TenantID", "CreatedAt"}) {
		t.Fatalf("the update leaves %v as they were; it must change every field but ID, TenantID and CreatedAt", same)
	}
	env.readsBack(t, "Service.Update", updated)

	many := []*risks.Risk{env.full(t, 3), env.full(t, 4)}
	if err := env.store.CreateMany(ctx, many); err != nil {
		t.Fatal(err)
	}
	for _, r := range many {
		env.readsBack(t, "CreateMany", r)
	}
}

// TestExportImportsEveryField: a risk exported as a CSV row (riskview.Cells) and
// imported (riskview.ReadRow, risks.Service.Import) is stored with every field it
// had but those the server sets (its ID, version, timestamps): created through
// CreateMany, and over an existing risk with the same external ID through Update.
func TestExportImportsEveryField(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := newFieldsEnv(t)
	for i, n := range []int{5, 6} { // the first creates, the second updates it
		exported := env.full(t, n)
		ext := "ext-import"
		exported.ExternalID = &ext
		row, errs := riskview.ReadRow(2, riskview.Columns, riskview.Cells(exported))
		if len(errs) > 0 {
			t.Fatalf("the export of a valid risk reads back with errors: %v", errs)
		}
		rep, err := env.svc.Import(ctx, env.tenant, risks.Rows([]risks.ImportRow{row}), false, func() string { return ids.New(ids.Risk) }, env.now.Add(time.Duration(i)*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if want := (risks.ImportReport{Created: 1 - i, Updated: i}); rep != want {
			t.Fatalf("import of variant %d: %+v, want %+v", n, rep, want)
		}
		got, err := env.store.GetByExternalID(ctx, env.tenant, ext)
		if err != nil {
			t.Fatal(err)
		}
		want := *exported
		want.ID, want.Version, want.CreatedAt, want.UpdatedAt = got.ID, got.Version, got.CreatedAt, got.UpdatedAt
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Errorf("import of variant %d lost a field (-exported +stored):\n%s", n, diff)
		}
	}
}

// TestRowMatchesTheMigratedSchema: the store writes every field of its row type
// (riskstore.Columns), so each needs its column in the migrated risks table — and a
// column no field writes keeps a value nothing reads. Fails for a field added to the
// row without its migration (internal/migrations), on the store under test.
func TestRowMatchesTheMigratedSchema(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	types, err := db.Migrator().ColumnTypes("risks")
	if err != nil {
		t.Fatal(err)
	}
	var migrated []string
	for _, c := range types {
		// An import's mark: written by database.InsertRows for a pending import,
		// read by the filter that hides it (migration 0031), in no row.
		if c.Name() != "import_id" {
			migrated = append(migrated, c.Name())
		}
	}
	row := slices.Clone(riskstore.Columns)
	slices.Sort(row)
	slices.Sort(migrated)
	if diff := cmp.Diff(row, migrated); diff != "" {
		t.Errorf("the row type's columns and the migrated risks table differ (-row +table); "+
			"add a migration (internal/migrations) for a new field:\n%s", diff)
	}
}

// fieldsUsers are the users risktest's risks name as owners: the user "OwnerUserID
// <n>" has the email "Owner <n>", as risktest.Full gives a user owner its name.
type fieldsUsers struct{}

func (fieldsUsers) UserEmail(_ context.Context, _, userID string) (string, error) {
	n, ok := strings.CutPrefix(userID, "OwnerUserID ")
	if !ok {
		return "", risks.ErrOwnerUnknown
	}
	return "Owner " + n, nil
}
