package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0018APIVersions adds what API versions need (docs/api-versions.md): each tenant's
// pinned version, with the version its last move replaced and when (the 72 h
// rollback); each webhook endpoint's version; each request-log entry's version; and
// a risk's owner as one of the tenant's users (owner_user_id, beside the owner's
// text, which stays the name shown: the user's email for a user owner). Tenants and
// endpoints that exist already are pinned to 2026-12-01, the shape their clients
// were written for; new ones are pinned to the newest by the code that creates them.
var m0018APIVersions = &gormigrate.Migration{
	ID: "0018_api_versions",
	Migrate: func(tx *gorm.DB) error {
		stamp := "timestamptz"
		if tx.Dialector.Name() != "postgres" {
			stamp = "datetime"
		}
		return execAll(tx, []string{
			`ALTER TABLE tenants ADD COLUMN api_version TEXT NOT NULL DEFAULT '2026-12-01'`,
			`ALTER TABLE tenants ADD COLUMN api_version_replaced TEXT`,
			`ALTER TABLE tenants ADD COLUMN api_version_moved_at ` + stamp,
			`ALTER TABLE webhook_endpoints ADD COLUMN api_version TEXT NOT NULL DEFAULT '2026-12-01'`,
			`ALTER TABLE request_log_entries ADD COLUMN api_version TEXT NOT NULL DEFAULT ''`,
			`ALTER TABLE risks ADD COLUMN owner_user_id TEXT`,
			`CREATE INDEX risks_tenant_owner_user ON risks (tenant_id, owner_user_id) WHERE owner_user_id IS NOT NULL`,
		})
	},
	Rollback: func(tx *gorm.DB) error {
		return execAll(tx, []string{
			`DROP INDEX risks_tenant_owner_user`,
			`ALTER TABLE risks DROP COLUMN owner_user_id`,
			`ALTER TABLE request_log_entries DROP COLUMN api_version`,
			`ALTER TABLE webhook_endpoints DROP COLUMN api_version`,
			`ALTER TABLE tenants DROP COLUMN api_version_moved_at`,
			`ALTER TABLE tenants DROP COLUMN api_version_replaced`,
			`ALTER TABLE tenants DROP COLUMN api_version`,
		})
	},
}
