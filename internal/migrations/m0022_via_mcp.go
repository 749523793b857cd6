package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0022ViaMCP lets the audit log and the request log name calls made over MCP
// (contract section 22): via ("mcp") and the client's name/version from its
// initialize. Plain nullable columns: every earlier entry, and every plain HTTP
// request, has none.
var m0022ViaMCP = &gormigrate.Migration{
	ID: "0022_via_mcp",
	Migrate: func(tx *gorm.DB) error {
		for _, table := range []string{"audit_log", "request_log_entries"} {
			for _, col := range []string{"via varchar(8)", "client varchar(256)"} {
				if err := tx.Exec(`ALTER TABLE ` + table + ` ADD COLUMN ` + col).Error; err != nil {
					return err
				}
			}
		}
		return nil
	},
	Rollback: func(tx *gorm.DB) error {
		for _, table := range []string{"audit_log", "request_log_entries"} {
			for _, col := range []string{"via", "client"} {
				if err := tx.Migrator().DropColumn(table, col); err != nil {
					return err
				}
			}
		}
		return nil
	},
}
