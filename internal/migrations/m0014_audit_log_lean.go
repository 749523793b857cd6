package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0014AuditLogLean drops the audit log's occurred_at index: every write inserts an
// entry and paid for its b-tree, which only the retention sweep read. The sweep now
// finds old entries by their primary key, whose UUIDv7 IDs carry the entry's time
// (audit.Entry, docs/performance.md "What the audit log costs every write").
var m0014AuditLogLean = &gormigrate.Migration{
	ID: "0014_audit_log_lean",
	Migrate: func(tx *gorm.DB) error {
		return tx.Exec("DROP INDEX idx_audit_log_occurred_at").Error
	},
	Rollback: func(tx *gorm.DB) error {
		return tx.Exec("CREATE INDEX idx_audit_log_occurred_at ON audit_log (occurred_at)").Error
	},
}
