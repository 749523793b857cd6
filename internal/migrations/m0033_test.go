package migrations_test

import (
	"context"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/migrations"
)

// TestActionOwnerEmailMigration: on a database as 0030 left it, 0033 gives each
// stored action its owner's email, and an action whose owner was deleted an empty
// one rather than failing the migration.
func TestActionOwnerEmailMigration(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	ctx := context.Background()
	for _, q := range []string{"ALTER TABLE risk_actions DROP COLUMN owner",
		"DELETE FROM schema_migrations WHERE id = '0033_action_owner_email'"} {
		if err := db.Exec(q).Error; err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	for _, st := range []struct {
		q    string
		args []any
	}{
		{`INSERT INTO tenants (id, name, created_at) VALUES ('ten_1', 'Acme', ?)`, []any{now}},
		{`INSERT INTO users (id, tenant_id, email, password_hash, role, created_at) VALUES ('usr_1', 'ten_1', 'ann@example.com', 'x', 'member', ?)`, []any{now}},
		{`INSERT INTO risk_actions (id, tenant_id, risk_id, title, owner_id, status, version, created_at, updated_at)
			VALUES ('act_1', 'ten_1', 'risk_1', 'kept', 'usr_1', 'open', 1, ?, ?)`, []any{now, now}},
		{`INSERT INTO risk_actions (id, tenant_id, risk_id, title, owner_id, status, version, created_at, updated_at)
			VALUES ('act_2', 'ten_1', 'risk_1', 'orphan', 'usr_gone', 'open', 1, ?, ?)`, []any{now, now}},
	} {
		if err := db.Exec(st.q, st.args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	if n, err := migrations.Apply(ctx, db); err != nil || n != 1 {
		t.Fatalf("Apply = %d, %v; want 1 migration", n, err)
	}
	var rows []struct{ ID, Owner string }
	if err := db.Raw("SELECT id, owner FROM risk_actions ORDER BY id").Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Owner != "ann@example.com" || rows[1].Owner != "" {
		t.Errorf("owners after 0033 = %+v, want ann@example.com and empty", rows)
	}
}
