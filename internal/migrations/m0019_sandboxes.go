package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0019Sandboxes gives every tenant a sandbox (contract section 18, docs/sandboxes.md):
// a row of tenants whose ID is the tenant's with the prefix "sbx" (ids.SandboxOf)
// and whose sandbox_of names the tenant. Every table keyed by tenant_id holds the
// sandbox's data apart from the tenant's, and the SQLite search index (keyed by the
// tenants row, m0017) gives it a range of its own. API keys get their mode: every key
// made before is live.
var m0019Sandboxes = &gormigrate.Migration{
	ID: "0019_sandboxes",
	Migrate: func(tx *gorm.DB) error {
		type tenant struct {
			SandboxOf *string `gorm:"size:40;uniqueIndex:idx_tenants_sandbox_of"`
		}
		type apiKey struct {
			Mode string `gorm:"size:4;not null;default:live"`
		}
		m := tx.Migrator()
		if err := m.AddColumn(&tenant{}, "SandboxOf"); err != nil {
			return err
		}
		if err := m.CreateIndex(&tenant{}, "idx_tenants_sandbox_of"); err != nil {
			return err
		}
		if err := m.AddColumn(&apiKey{}, "Mode"); err != nil {
			return err
		}
		return tx.Exec(`INSERT INTO tenants (id, name, created_at, disabled_at, sandbox_of)
			SELECT CASE WHEN substr(id, 1, 4) = 'ten_' THEN 'sbx_' || substr(id, 5) ELSE 'sbx_' || id END,
				name, created_at, disabled_at, id
			FROM tenants WHERE sandbox_of IS NULL`).Error
	},
	// Rollback drops the sandboxes' rows and the columns; their data stays, apart,
	// under tenant IDs no credential reaches.
	Rollback: func(tx *gorm.DB) error {
		return execAll(tx, []string{`DELETE FROM tenants WHERE sandbox_of IS NOT NULL`,
			`DROP INDEX idx_tenants_sandbox_of`,
			`ALTER TABLE tenants DROP COLUMN sandbox_of`, `ALTER TABLE api_keys DROP COLUMN mode`})
	},
}
