package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0020Lifecycle gives API keys and webhook endpoints a lifecycle (docs/roles-and-credentials.md,
// docs/events.md; contract section 19):
//
//   - api_keys.expires_at: when the key stops working (NULL: never); indexed, so
//     that a due-date schedule can find the keys about to expire (api_key.expiring);
//     expiry_recorded_at: when its api_key.expired entry was written, so it is
//     written once; allowed_cidrs: the networks it may be used from, comma-separated
//     ("" anywhere); rolled_to: the key a roll replaced it with.
//   - webhook_endpoints.description; disabled_at (NULL: enabled); previous_secret and
//     previous_secret_expires_at: the secret a roll replaced, sealed like secret, still
//     signing deliveries until it expires; failing_since: the first failed attempt
//     since the last delivered one, NULL when its last delivery succeeded — an
//     endpoint failing since WEBHOOK_AUTO_DISABLE_AFTER ago is disabled.
var m0020Lifecycle = &gormigrate.Migration{
	ID: "0020_lifecycle",
	Migrate: func(tx *gorm.DB) error {
		ts := "DATETIME"
		if tx.Dialector.Name() == "postgres" {
			ts = "TIMESTAMPTZ"
		}
		return execAll(tx, []string{
			"ALTER TABLE api_keys ADD COLUMN expires_at " + ts,
			"ALTER TABLE api_keys ADD COLUMN expiry_recorded_at " + ts,
			"ALTER TABLE api_keys ADD COLUMN allowed_cidrs TEXT NOT NULL DEFAULT ''",
			"ALTER TABLE api_keys ADD COLUMN rolled_to VARCHAR(40) NOT NULL DEFAULT ''",
			"CREATE INDEX idx_api_keys_expires_at ON api_keys (expires_at)",
			"ALTER TABLE webhook_endpoints ADD COLUMN description TEXT NOT NULL DEFAULT ''",
			"ALTER TABLE webhook_endpoints ADD COLUMN disabled_at " + ts,
			"ALTER TABLE webhook_endpoints ADD COLUMN previous_secret TEXT NOT NULL DEFAULT ''",
			"ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_expires_at " + ts,
			"ALTER TABLE webhook_endpoints ADD COLUMN failing_since " + ts,
			"CREATE INDEX idx_webhook_endpoints_failing_since ON webhook_endpoints (failing_since)",
		})
	},
	Rollback: func(tx *gorm.DB) error {
		return execAll(tx, []string{
			"DROP INDEX idx_webhook_endpoints_failing_since",
			"DROP INDEX idx_api_keys_expires_at",
			"ALTER TABLE webhook_endpoints DROP COLUMN failing_since",
			"ALTER TABLE webhook_endpoints DROP COLUMN previous_secret_expires_at",
			"ALTER TABLE webhook_endpoints DROP COLUMN previous_secret",
			"ALTER TABLE webhook_endpoints DROP COLUMN disabled_at",
			"ALTER TABLE webhook_endpoints DROP COLUMN description",
			"ALTER TABLE api_keys DROP COLUMN rolled_to",
			"ALTER TABLE api_keys DROP COLUMN allowed_cidrs",
			"ALTER TABLE api_keys DROP COLUMN expiry_recorded_at",
			"ALTER TABLE api_keys DROP COLUMN expires_at",
		})
	},
}
