package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0010RiskVersion gives every risk its version (docs/openapi.yaml, ETag and
// If-Match): 1 at creation, one more for each change. Risks stored before it start
// at 1: no ETag was issued for them before, so none can be stale.
var m0010RiskVersion = &gormigrate.Migration{
	ID: "0010_risk_version",
	Migrate: func(tx *gorm.DB) error {
		return tx.Exec(`ALTER TABLE risks ADD COLUMN version BIGINT NOT NULL DEFAULT 1`).Error
	},
	Rollback: func(tx *gorm.DB) error {
		return tx.Exec(`ALTER TABLE risks DROP COLUMN version`).Error
	},
}
