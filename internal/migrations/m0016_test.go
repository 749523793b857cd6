package migrations_test

import (
	"context"
	"testing"

	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/migrations"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskstore"
)

// TestHeatCountsMigration: risks stored before 0016 are counted by it — unassessed
// ones (no likelihood, or no residual assessment) and untreated ones included, each
// tenant on its own — and a risk written after it is counted by its triggers.
func TestHeatCountsMigration(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	ctx := context.Background()
	if err := migrations.RollbackHeatCounts(db.DB); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("DELETE FROM schema_migrations WHERE id = ?", "0016_heat_counts").Error; err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		"INSERT INTO tenants (id, name, created_at) VALUES ('ten_a', 'A', CURRENT_TIMESTAMP), ('ten_b', 'B', CURRENT_TIMESTAMP)",
		`INSERT INTO risks (id, tenant_id, title, description, category, status, owner, likelihood, impact,
			treatment, residual_likelihood, residual_impact, created_at, updated_at) VALUES
			('risk_1', 'ten_a', 't', '', '', 'open', '', 2, 3, 'mitigate', 1, 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP),
			('risk_2', 'ten_a', 't', '', '', 'open', '', 2, 3, 'mitigate', 1, 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP),
			('risk_3', 'ten_a', 't', '', '', 'closed', '', 2, 3, NULL, NULL, NULL, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP),
			('risk_4', 'ten_a', 't', '', '', 'open', '', NULL, 4, NULL, 5, 5, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP),
			('risk_5', 'ten_b', 't', '', '', 'open', '', 5, 5, 'accept', NULL, NULL, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
	} {
		if err := db.Exec(stmt).Error; err != nil {
			t.Fatal(err)
		}
	}
	if n, err := migrations.Apply(ctx, db); err != nil || n != 1 {
		t.Fatalf("Apply = %d, %v; want 1 migration", n, err)
	}
	s := riskstore.New(db.DB, noRecord{})
	heat := func(tenant string, q risks.Query, basis risks.Basis) risks.Heatmap {
		t.Helper()
		h, err := s.Heatmap(ctx, tenant, q, basis)
		if err != nil {
			t.Fatal(err)
		}
		return *h
	}
	var want risks.Heatmap
	want.Counts[1][2], want.Unassessed = 3, 1
	if got := heat("ten_a", risks.Query{}, risks.BasisInherent); got != want {
		t.Errorf("tenant A, inherent: %+v, want %+v", got, want)
	}
	want = risks.Heatmap{Unassessed: 1}
	want.Counts[0][0], want.Counts[4][4] = 2, 1
	if got := heat("ten_a", risks.Query{}, risks.BasisResidual); got != want {
		t.Errorf("tenant A, residual: %+v, want %+v", got, want)
	}
	want = risks.Heatmap{}
	want.Counts[1][2] = 2
	if got := heat("ten_a", risks.Query{Statuses: []risks.Status{risks.StatusOpen},
		Treatments: []risks.Treatment{risks.TreatmentMitigate}}, risks.BasisInherent); got != want {
		t.Errorf("tenant A, open and mitigated: %+v, want %+v", got, want)
	}
	if err := db.Exec(`INSERT INTO risks (id, tenant_id, title, description, category, status, owner, likelihood,
		impact, created_at, updated_at) VALUES ('risk_6', 'ten_b', 't', '', '', 'open', '', 5, 5, CURRENT_TIMESTAMP,
		CURRENT_TIMESTAMP)`).Error; err != nil {
		t.Fatal(err)
	}
	want = risks.Heatmap{}
	want.Counts[4][4] = 2
	if got := heat("ten_b", risks.Query{}, risks.BasisInherent); got != want {
		t.Errorf("tenant B after a new risk: %+v, want %+v", got, want)
	}
}
