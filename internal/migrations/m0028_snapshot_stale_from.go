package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0028SnapshotStaleFrom gives each register snapshot the audit-log ID from which a
// change of its tenant makes it stale (internal/trends, Snapshotter.Settle): the
// schedule recounts today's snapshot of a tenant only when its audit log has an
// entry at or after it, so an idle tenant costs one index probe a run, not a count
// of its register. NULL (rows of before): always stale.
var m0028SnapshotStaleFrom = &gormigrate.Migration{
	ID: "0028_snapshot_stale_from",
	Migrate: func(tx *gorm.DB) error {
		return execAll(tx, []string{`ALTER TABLE register_snapshots ADD COLUMN stale_from VARCHAR(40)`})
	},
	Rollback: func(tx *gorm.DB) error {
		return execAll(tx, []string{`ALTER TABLE register_snapshots DROP COLUMN stale_from`})
	},
}
