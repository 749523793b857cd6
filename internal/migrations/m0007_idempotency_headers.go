package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0007IdempotencyHeaders adds the response headers a COMPLETE record keeps for its
// replays besides Content-Type (idempotency.Config.KeepHeaders; riskapi keeps
// Location): a JSON object of canonical name to value, "" when none. Records written
// before it replay without them, as they always did.
var m0007IdempotencyHeaders = &gormigrate.Migration{
	ID: "0007_idempotency_headers",
	Migrate: func(tx *gorm.DB) error {
		return tx.Exec(`ALTER TABLE idempotency_records ADD COLUMN headers TEXT NOT NULL DEFAULT ''`).Error
	},
	Rollback: func(tx *gorm.DB) error {
		return tx.Exec(`ALTER TABLE idempotency_records DROP COLUMN headers`).Error
	},
}
