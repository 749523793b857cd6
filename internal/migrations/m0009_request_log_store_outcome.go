package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0009RequestLogStoreOutcome gives request-log entries the outcome of a 503
// STORE_UNAVAILABLE (not_executed or unknown, as its problem said; docs/requests.md).
// A plain nullable column: entries written before it, and every other answer, have
// none.
var m0009RequestLogStoreOutcome = &gormigrate.Migration{
	ID: "0009_request_log_store_outcome",
	Migrate: func(tx *gorm.DB) error {
		return tx.Exec(`ALTER TABLE request_log_entries ADD COLUMN store_outcome varchar(16)`).Error
	},
	Rollback: func(tx *gorm.DB) error {
		return tx.Migrator().DropColumn("request_log_entries", "store_outcome")
	},
}
