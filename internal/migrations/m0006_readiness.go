package migrations

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0006Readiness creates the one-row table /readyz writes to: ready means the store
// takes a committed write, not only that it answers (a full disk fails writes while
// reads still work).
var m0006Readiness = &gormigrate.Migration{
	ID: "0006_readiness",
	Migrate: func(tx *gorm.DB) error {
		type readinessProbe struct {
			ID        int `gorm:"primaryKey;autoIncrement:false"`
			CheckedAt time.Time
		}
		if err := tx.AutoMigrate(&readinessProbe{}); err != nil {
			return err
		}
		return tx.Create(&readinessProbe{ID: 1, CheckedAt: time.Now().UTC()}).Error
	},
	Rollback: func(tx *gorm.DB) error {
		return tx.Migrator().DropTable("readiness_probes")
	},
}
