package migrations_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/migrations"
)

// TestAccountsMigration: on a database as 0001 left it, with a user and a signed-in
// session, 0002 makes the user an admin, leaves the tenant enabled and rekeys the
// session by the SHA-256 of its jti, so the user stays signed in. (An upgrade, not a
// fresh database: that is where a migration's Migrator once wrote to the wrong table.)
func TestAccountsMigration(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	ctx := context.Background()
	// Back to 0001's schema.
	for _, q := range []string{"ALTER TABLE users DROP COLUMN role", "ALTER TABLE tenants DROP COLUMN disabled_at"} {
		if err := db.Exec(q).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Exec("DELETE FROM schema_migrations WHERE id = ?", "0002_accounts").Error; err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO tenants (id, name, created_at) VALUES (?, ?, ?)", []any{"ten_1", "Acme", now}},
		{"INSERT INTO users (id, tenant_id, email, password_hash, created_at) VALUES (?, ?, ?, ?, ?)", []any{"usr_1", "ten_1", "a@example.com", "$2a$x", now}},
		{"INSERT INTO sessions (id, user_id, tenant_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)", []any{"jti-1", "usr_1", "ten_1", now, now.Add(time.Hour)}},
	} {
		if err := db.Exec(q.sql, q.args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	n, err := migrations.Apply(ctx, db)
	if err != nil || n != 1 {
		t.Fatalf("Apply = %d, %v; want 1 migration", n, err)
	}
	var role string
	var enabled int
	if err := db.Raw("SELECT role FROM users WHERE id = 'usr_1'").Scan(&role).Error; err != nil || role != "admin" {
		t.Errorf("existing user's role = %q, %v; want admin", role, err)
	}
	if err := db.Raw("SELECT COUNT(*) FROM tenants WHERE id = 'ten_1' AND disabled_at IS NULL").Scan(&enabled).Error; err != nil || enabled != 1 {
		t.Errorf("existing tenant enabled = %d, %v; want disabled_at NULL", enabled, err)
	}
	sum := sha256.Sum256([]byte("jti-1"))
	var ids []string
	if err := db.Raw("SELECT id FROM sessions").Scan(&ids).Error; err != nil || len(ids) != 1 || ids[0] != hex.EncodeToString(sum[:]) {
		t.Errorf("session ids = %v, %v; want the SHA-256 of the jti", ids, err)
	}
	if n, err := migrations.Apply(ctx, db); err != nil || n != 0 {
		t.Errorf("second Apply = %d, %v; want nothing to do", n, err)
	}
}
