package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0025EndpointVersion gives webhook endpoints a version, one more for each change
// made through their routes (PATCH, disable, enable, roll-secret, auto-disable): the
// ETag that PATCH's If-Match names (docs/events.md), as a risk's version is. Every
// endpoint starts at 1.
var m0025EndpointVersion = &gormigrate.Migration{
	ID: "0025_endpoint_version",
	Migrate: func(tx *gorm.DB) error {
		return tx.Exec(`ALTER TABLE webhook_endpoints ADD COLUMN version BIGINT NOT NULL DEFAULT 1`).Error
	},
	Rollback: func(tx *gorm.DB) error {
		return tx.Migrator().DropColumn("webhook_endpoints", "version")
	},
}
