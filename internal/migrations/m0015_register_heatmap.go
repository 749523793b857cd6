package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0015RegisterHeatmap adds the index the heat map counts from without reading the
// table (docs/register.md, "Which index serves which query"): a tenant's risks by
// status and treatment, carrying both assessments, so the grouped count of a tenant,
// of some statuses or of some treatments is an index-only scan on PostgreSQL and a
// covering-index scan on SQLite. At 1 M risks the table read was the heat map's cost
// (docs/performance.md).
var m0015RegisterHeatmap = &gormigrate.Migration{
	ID: "0015_register_heatmap",
	Migrate: func(tx *gorm.DB) error {
		return tx.Exec(`CREATE INDEX idx_risks_tenant_heatmap ON risks (tenant_id, status, treatment,
			likelihood, impact, residual_likelihood, residual_impact)`).Error
	},
	Rollback: func(tx *gorm.DB) error {
		return tx.Exec(`DROP INDEX idx_risks_tenant_heatmap`).Error
	},
}
