package migrations_test

import (
	"context"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/migrations"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskstore"
)

type noRecord struct{}

func (noRecord) Record(context.Context, changes.Change) error { return nil }

// TestRiskRegisterMigration: risks stored before 0011 read back with none of the
// new fields set and metadata empty, sort by createdAt in time order (SQLite keeps
// timestamps as text with the fraction trimmed: "…09+00:00", "…09.5+00:00"), and are
// found by q through the index built for the rows already there.
func TestRiskRegisterMigration(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	ctx := context.Background()
	// 0015's index and 0016's triggers name 0013's columns (SQLite cannot drop a
	// column an index or a trigger names); 0017 replaced 0013's search index; 0021's
	// index names review_date; 0030's residual_score.
	if err := migrations.RollbackResidualSortHistory(db.DB); err != nil {
		t.Fatal(err)
	}
	if err := migrations.RollbackRegisterInTime(db.DB); err != nil {
		t.Fatal(err)
	}
	if err := migrations.RollbackSearchPerTenant(db.DB); err != nil {
		t.Fatal(err)
	}
	if err := migrations.RollbackHeatCounts(db.DB); err != nil {
		t.Fatal(err)
	}
	if err := migrations.RollbackRegisterHeatmap(db.DB); err != nil {
		t.Fatal(err)
	}
	if err := migrations.RollbackRiskRegister(db.DB); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("DELETE FROM schema_migrations WHERE id IN ?", []string{"0013_risk_register", "0015_register_heatmap", "0016_heat_counts", "0017_search_per_tenant", "0021_register_in_time", "0030_residual_sort_history"}).Error; err != nil {
		t.Fatal(err)
	}
	base := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	if err := db.Exec("INSERT INTO tenants (id, name, created_at) VALUES (?, ?, ?)", "ten_1", "Acme", base).Error; err != nil {
		t.Fatal(err)
	}
	for id, at := range map[string]time.Time{
		"risk_00000000000000000000000000000002": base,                             // …09Z
		"risk_00000000000000000000000000000001": base.Add(500 * time.Millisecond), // …09.5Z
		"risk_00000000000000000000000000000003": base.Add(-time.Microsecond),      // …08.999999Z
	} {
		if err := db.Exec(`INSERT INTO risks (id, tenant_id, title, description, category, status, owner, created_at, updated_at)
			VALUES (?, 'ten_1', 'Legacy vendor', 'no DPA', '', 'open', '', ?, ?)`, id, at, at).Error; err != nil {
			t.Fatal(err)
		}
	}
	if n, err := migrations.Apply(ctx, db); err != nil || n != 6 {
		t.Fatalf("Apply = %d, %v; want 6 migrations", n, err)
	}
	s := riskstore.New(db.DB, noRecord{})
	got, _, err := s.List(ctx, "ten_1", risks.Filter{Limit: 10, Query: risks.Query{Words: []string{"VENDOR", "dpa"},
		Sort: risks.Sort{Field: risks.SortCreatedAt}}})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range got {
		order = append(order, r.ID[len(r.ID)-1:])
		if r.Metadata != nil || r.Treatment != nil || r.ReviewDate != nil || r.ResidualScore != nil {
			t.Errorf("%s: new fields set on a migrated risk: %+v", r.ID, r)
		}
	}
	if want := "3 2 1"; len(order) != 3 || order[0]+" "+order[1]+" "+order[2] != want {
		t.Errorf("oldest first = %v, want %s", order, want)
	}
}
