package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0029DropTenantIndex drops idx_risks_tenant_id_id, the index on risks.tenant_id
// alone that m0001 made: tenant_id leads ten other b-trees of risks (the unique
// (tenant_id, external_id) among them), so every query it could answer — a tenant's
// count, a sandbox's reset, a tenant's deletion — is answered as well by those, and
// each risk INSERT, UPDATE of tenant_id or deletion paid for one more index
// (docs/performance.md, Indexes of risks).
var m0029DropTenantIndex = &gormigrate.Migration{
	ID: "0029_drop_tenant_index",
	Migrate: func(tx *gorm.DB) error {
		return execAll(tx, []string{`DROP INDEX idx_risks_tenant_id_id`})
	},
	Rollback: func(tx *gorm.DB) error {
		return execAll(tx, []string{`CREATE INDEX idx_risks_tenant_id_id ON risks (tenant_id)`})
	},
}
