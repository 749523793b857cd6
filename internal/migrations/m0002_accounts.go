package migrations

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0002Accounts gives users a role (existing users become admins, so no tenant is
// left without one), lets a tenant be disabled, and stores session IDs as SHA-256
// digests: existing rows are rewritten so signed-in users stay signed in.
var m0002Accounts = &gormigrate.Migration{
	ID: "0002_accounts",
	Migrate: func(tx *gorm.DB) error {
		type user struct {
			Role string `gorm:"size:20;not null;default:admin"`
		}
		type tenant struct {
			DisabledAt *time.Time
		}
		m := tx.Migrator()
		if err := m.AddColumn(&user{}, "Role"); err != nil {
			return err
		}
		if err := m.AddColumn(&tenant{}, "DisabledAt"); err != nil {
			return err
		}
		var sessionIDs []string
		if err := tx.Raw("SELECT id FROM sessions").Scan(&sessionIDs).Error; err != nil {
			return err
		}
		for _, id := range sessionIDs {
			sum := sha256.Sum256([]byte(id))
			if err := tx.Exec("UPDATE sessions SET id = ? WHERE id = ?", hex.EncodeToString(sum[:]), id).Error; err != nil {
				return err
			}
		}
		return nil
	},
	// Rollback drops the columns; session IDs stay digests (a digest cannot be undone,
	// so their users sign in again).
	Rollback: func(tx *gorm.DB) error {
		if err := tx.Exec("ALTER TABLE users DROP COLUMN role").Error; err != nil {
			return err
		}
		return tx.Exec("ALTER TABLE tenants DROP COLUMN disabled_at").Error
	},
}
