package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0030ResidualSortHistory serves two reads of the register (docs/register.md,
// docs/audit-log.md):
//   - a list sorted by residualScore: risks indexed by residual score, so that it
//     walks an index in its order as the other sorts do, rather than sorting every
//     risk of the tenant for each page; PostgreSQL also gets the descending index
//     with NULLs last, as for riskScore (m0013RiskRegister);
//   - a risk's history with its attachments' uploads and deletions: audit_log's
//     risk_id, the risk an entry's target belongs to when it is not a risk itself,
//     indexed where set. Entries recorded before it have none: the log is
//     append-only, so they stay in the audit log but out of the risk's history.
var m0030ResidualSortHistory = &gormigrate.Migration{
	ID: "0030_residual_sort_history",
	Migrate: func(tx *gorm.DB) error {
		stmts := []string{
			`CREATE INDEX idx_risks_tenant_residual ON risks (tenant_id, residual_score, id)`,
			`ALTER TABLE audit_log ADD COLUMN risk_id VARCHAR(40)`,
			`CREATE INDEX idx_audit_log_tenant_risk ON audit_log (tenant_id, risk_id, id) WHERE risk_id IS NOT NULL`,
		}
		if tx.Dialector.Name() == "postgres" {
			stmts = append(stmts,
				`CREATE INDEX idx_risks_tenant_residual_desc ON risks (tenant_id, residual_score DESC NULLS LAST, id DESC)`)
		}
		return execAll(tx, stmts)
	},
	Rollback: func(tx *gorm.DB) error {
		stmts := []string{`DROP INDEX idx_risks_tenant_residual`, `DROP INDEX idx_audit_log_tenant_risk`,
			`ALTER TABLE audit_log DROP COLUMN risk_id`}
		if tx.Dialector.Name() == "postgres" {
			stmts = append(stmts, `DROP INDEX idx_risks_tenant_residual_desc`)
		}
		return execAll(tx, stmts)
	},
}
