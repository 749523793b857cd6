package migrations

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0011AuditLog creates the audit log (docs/audit-log.md) and records who created
// each API key. The log is append-only: a trigger refuses every UPDATE on both
// stores, so no code path can rewrite an entry; only the retention sweep deletes.
var m0011AuditLog = &gormigrate.Migration{
	ID: "0011_audit_log",
	Migrate: func(tx *gorm.DB) error {
		type auditLogEntry struct {
			// IDs are UUIDv7, so (tenant, id) is the tenant's entries in time order:
			// listing newest first, filtered by action, actor or time, walks it.
			ID       string `gorm:"primaryKey;size:40;index:idx_audit_log_tenant_id,priority:2;index:idx_audit_log_tenant_target,priority:3"`
			TenantID string `gorm:"size:40;not null;index:idx_audit_log_tenant_id,priority:1;index:idx_audit_log_tenant_target,priority:1"`
			// The sweep deletes by age through this index.
			OccurredAt time.Time `gorm:"not null;index"`
			ActorType  string    `gorm:"size:20;not null"`
			ActorID    string    `gorm:"size:40;not null"`
			ActorEmail string    `gorm:"size:320;not null"`
			Action     string    `gorm:"size:40;not null"`
			TargetType string    `gorm:"size:40;not null"`
			// A resource's history (GET /risks/{id}/history) reads this index.
			TargetID  string  `gorm:"size:80;not null;index:idx_audit_log_tenant_target,priority:2"`
			Changes   *string `gorm:"type:text"`
			RequestID string  `gorm:"size:100;not null"`
			IP        string  `gorm:"size:64;not null"`
			UserAgent string  `gorm:"size:512;not null"`
		}
		if err := tx.Table("audit_log").AutoMigrate(&auditLogEntry{}); err != nil {
			return err
		}
		// The actor who created each key (type "user", "api_key" or "system", and
		// its ID); "" for keys created before 0011.
		for _, col := range []string{"created_by_type VARCHAR(20)", "created_by_id VARCHAR(40)"} {
			if err := tx.Exec("ALTER TABLE api_keys ADD COLUMN " + col + " NOT NULL DEFAULT ''").Error; err != nil {
				return err
			}
		}
		if tx.Dialector.Name() == "postgres" {
			if err := tx.Exec(`CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit log entries are append-only'; END $$`).Error; err != nil {
				return err
			}
			return tx.Exec(`CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()`).Error
		}
		return tx.Exec(`CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit log entries are append-only'); END`).Error
	},
	Rollback: func(tx *gorm.DB) error {
		if err := tx.Migrator().DropTable("audit_log"); err != nil {
			return err
		}
		if tx.Dialector.Name() == "postgres" {
			if err := tx.Exec("DROP FUNCTION IF EXISTS audit_log_append_only()").Error; err != nil {
				return err
			}
		}
		for _, col := range []string{"created_by_type", "created_by_id"} {
			if err := tx.Exec("ALTER TABLE api_keys DROP COLUMN " + col).Error; err != nil {
				return err
			}
		}
		return nil
	},
}
