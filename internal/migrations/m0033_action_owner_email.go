package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0033ActionOwnerEmail keeps an action's owner's email beside their ID, as a
// risk's user owner shows its email (docs/register.md, "Actions"): a member, who
// may not list the tenant's users, read actions owned by a colleague as a bare
// usr_… ID. Actions made before it take their owner's email now; one whose owner
// was deleted keeps an empty one.
var m0033ActionOwnerEmail = &gormigrate.Migration{
	ID: "0033_action_owner_email",
	Migrate: func(tx *gorm.DB) error {
		return execAll(tx, []string{
			`ALTER TABLE risk_actions ADD COLUMN owner VARCHAR(320) NOT NULL DEFAULT ''`,
			`UPDATE risk_actions SET owner = COALESCE((SELECT email FROM users WHERE users.id = risk_actions.owner_id), '')`,
		})
	},
	Rollback: func(tx *gorm.DB) error {
		return execAll(tx, []string{`ALTER TABLE risk_actions DROP COLUMN owner`})
	},
}
