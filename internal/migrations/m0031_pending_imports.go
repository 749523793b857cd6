package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0031PendingImports serves an import written in short transactions on SQLite
// (docs/register.md "Import", docs/performance.md "A fair share of capacity"):
// pending_imports holds one row per import written but not yet published (or
// not yet taken back), and the rows such an import writes — risks, their events,
// audit entries and queued deliveries — carry its ID in import_id. A row whose
// import_id names a pending import is read by no one; publishing deletes the
// pending row, and the marks stay as provenance. The partial indexes serve the
// take-back's deletion of a failed import's rows; rows written otherwise have no
// mark and are in none of them.
var m0031PendingImports = &gormigrate.Migration{
	ID: "0031_pending_imports",
	Migrate: func(tx *gorm.DB) error {
		return execAll(tx, []string{
			`CREATE TABLE pending_imports (
				id VARCHAR(40) PRIMARY KEY,
				tenant_id VARCHAR(40) NOT NULL,
				created_at TIMESTAMP NOT NULL)`,
			`ALTER TABLE risks ADD COLUMN import_id VARCHAR(40)`,
			`CREATE INDEX idx_risks_import ON risks (import_id) WHERE import_id IS NOT NULL`,
			`ALTER TABLE events ADD COLUMN import_id VARCHAR(40)`,
			`CREATE INDEX idx_events_import ON events (import_id) WHERE import_id IS NOT NULL`,
			`ALTER TABLE audit_log ADD COLUMN import_id VARCHAR(40)`,
			`CREATE INDEX idx_audit_log_import ON audit_log (import_id) WHERE import_id IS NOT NULL`,
			`ALTER TABLE webhook_deliveries ADD COLUMN import_id VARCHAR(40)`,
		})
	},
	Rollback: func(tx *gorm.DB) error {
		return execAll(tx, []string{
			`DROP INDEX idx_risks_import`, `ALTER TABLE risks DROP COLUMN import_id`,
			`DROP INDEX idx_events_import`, `ALTER TABLE events DROP COLUMN import_id`,
			`DROP INDEX idx_audit_log_import`, `ALTER TABLE audit_log DROP COLUMN import_id`,
			`ALTER TABLE webhook_deliveries DROP COLUMN import_id`,
			`DROP TABLE pending_imports`,
		})
	},
}
