package migrations

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0026AppetiteTrends adds the tenant's risk appetite (docs/register.md, Appetite):
// the overall appetite and its version on tenants, each category's appetite in
// category_appetites; and register_snapshots, one row per (tenant, UTC day) — the
// primary key is what makes the schedule's snapshot one per day however many
// instances take it (internal/trends).
var m0026AppetiteTrends = &gormigrate.Migration{
	ID: "0026_appetite_trends",
	Migrate: func(tx *gorm.DB) error {
		type categoryAppetite struct {
			TenantID string `gorm:"primaryKey;size:40"`
			Category string `gorm:"primaryKey;size:100"`
			Appetite int    `gorm:"not null"`
		}
		type registerSnapshot struct {
			TenantID string `gorm:"primaryKey;size:40"`
			Day      string `gorm:"primaryKey;size:10"` // YYYY-MM-DD, UTC
			// Counts is the day's counts, a JSON object (trends.Counts).
			Counts  string    `gorm:"type:text;not null"`
			TakenAt time.Time `gorm:"not null"`
		}
		if err := tx.AutoMigrate(&categoryAppetite{}, &registerSnapshot{}); err != nil {
			return err
		}
		return execAll(tx, []string{
			`ALTER TABLE tenants ADD COLUMN risk_appetite INTEGER`,
			`ALTER TABLE tenants ADD COLUMN appetite_version BIGINT NOT NULL DEFAULT 1`,
		})
	},
	Rollback: func(tx *gorm.DB) error {
		if err := execAll(tx, []string{`ALTER TABLE tenants DROP COLUMN appetite_version`,
			`ALTER TABLE tenants DROP COLUMN risk_appetite`}); err != nil {
			return err
		}
		return tx.Migrator().DropTable("register_snapshots", "category_appetites")
	},
}
