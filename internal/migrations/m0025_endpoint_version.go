package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0025EndpointVersion gives webhook endpoints a version, one more for each change
// made through their routes (PATCH, disable, enable, roll-secret, auto-disable): the
// ETag that PATCH's If-Match names (docs/events.md), as a risk's version is. Every
// endpoint starts at 1. It also indexes due_notices by due date, which the sweep
// of notices past their retention reads (docs/register.md, Due dates).
var m0025EndpointVersion = &gormigrate.Migration{
	ID: "0025_endpoint_version",
	Migrate: func(tx *gorm.DB) error {
		return execAll(tx, []string{
			`ALTER TABLE webhook_endpoints ADD COLUMN version BIGINT NOT NULL DEFAULT 1`,
			`CREATE INDEX idx_due_notices_due_date ON due_notices (due_date)`,
		})
	},
	Rollback: func(tx *gorm.DB) error {
		return execAll(tx, []string{
			`DROP INDEX idx_due_notices_due_date`,
			`ALTER TABLE webhook_endpoints DROP COLUMN version`,
		})
	},
}
