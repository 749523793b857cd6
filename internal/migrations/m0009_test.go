package migrations_test

import (
	"context"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/migrations"
)

// TestRiskVersionMigration: on a database as 0008 left it, a stored risk gets
// version 1 from 0009, and a new one can be written with its version.
func TestRiskVersionMigration(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	ctx := context.Background()
	if err := db.Exec("ALTER TABLE risks DROP COLUMN version").Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("DELETE FROM schema_migrations WHERE id = ?", "0010_risk_version").Error; err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if err := db.Exec("INSERT INTO tenants (id, name, created_at) VALUES (?, ?, ?)", "ten_1", "Acme", now).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(`INSERT INTO risks (id, tenant_id, title, description, category, status, owner, created_at, updated_at)
		VALUES ('risk_1', 'ten_1', 'old', '', '', 'open', '', ?, ?)`, now, now).Error; err != nil {
		t.Fatal(err)
	}
	if n, err := migrations.Apply(ctx, db); err != nil || n != 1 {
		t.Fatalf("Apply = %d, %v; want 1 migration", n, err)
	}
	var version int64
	if err := db.Raw("SELECT version FROM risks WHERE id = 'risk_1'").Scan(&version).Error; err != nil || version != 1 {
		t.Fatalf("version of a risk stored before 0009 = %d, %v; want 1", version, err)
	}
}
