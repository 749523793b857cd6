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
		if err := tx.Table("sessions").Pluck("id", &sessionIDs).Error; err != nil {
			return err
		}
		for _, id := range sessionIDs {
			sum := sha256.Sum256([]byte(id))
			if err := tx.Table("sessions").Where("id = ?", id).
				Update("id", hex.EncodeToString(sum[:])).Error; err != nil {
				return err
			}
		}
		return nil
	},
	Rollback: func(tx *gorm.DB) error {
		m := tx.Migrator()
		if err := m.DropColumn("users", "role"); err != nil {
			return err
		}
		return m.DropColumn("tenants", "disabled_at")
	},
}
