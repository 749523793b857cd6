package migrations

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0021RegisterInTime adds the register in time (docs/register.md): a risk's review
// cadence, its reviews, treatment actions and acceptances, and due_notices, the
// record of each due-date notice emitted (its derived event ID, and the (kind,
// object, due date) it is unique on) that makes the schedule emit each once.
// The partial indexes are what the schedule's finder reads (internal/due).
var m0021RegisterInTime = &gormigrate.Migration{
	ID: "0021_register_in_time",
	Migrate: func(tx *gorm.DB) error {
		type riskReview struct {
			ID             string    `gorm:"primaryKey;size:40;index:idx_risk_reviews_risk,priority:3"`
			TenantID       string    `gorm:"size:40;not null;index:idx_risk_reviews_risk,priority:1"`
			RiskID         string    `gorm:"size:40;not null;index:idx_risk_reviews_risk,priority:2"`
			Note           string    `gorm:"type:text;not null"`
			Outcome        string    `gorm:"size:16;not null"`
			ReviewerType   string    `gorm:"size:20;not null"`
			ReviewerID     string    `gorm:"size:40;not null"`
			ReviewerEmail  string    `gorm:"size:320;not null"`
			NextReviewDate *string   `gorm:"size:10"`
			CreatedAt      time.Time `gorm:"not null"`
		}
		type riskAction struct {
			ID        string    `gorm:"primaryKey;size:40;index:idx_risk_actions_risk,priority:3;index:idx_risk_actions_owner,priority:3"`
			TenantID  string    `gorm:"size:40;not null;index:idx_risk_actions_risk,priority:1;index:idx_risk_actions_owner,priority:1"`
			RiskID    string    `gorm:"size:40;not null;index:idx_risk_actions_risk,priority:2"`
			Title     string    `gorm:"size:800;not null"`
			OwnerID   string    `gorm:"size:40;not null;index:idx_risk_actions_owner,priority:2"`
			DueDate   *string   `gorm:"size:10"`
			Status    string    `gorm:"size:16;not null"`
			Version   int64     `gorm:"not null"`
			CreatedAt time.Time `gorm:"not null"`
			UpdatedAt time.Time `gorm:"not null"`
		}
		type acceptance struct {
			ID               string  `gorm:"primaryKey;size:40;index:idx_acceptances_risk,priority:3;index:idx_acceptances_status,priority:3"`
			TenantID         string  `gorm:"size:40;not null;index:idx_acceptances_risk,priority:1;index:idx_acceptances_status,priority:1"`
			RiskID           string  `gorm:"size:40;not null;index:idx_acceptances_risk,priority:2"`
			Justification    string  `gorm:"type:text;not null"`
			ValidUntil       string  `gorm:"size:10;not null"`
			Status           string  `gorm:"size:16;not null;index:idx_acceptances_status,priority:2"`
			RequestedByType  string  `gorm:"size:20;not null"`
			RequestedBy      string  `gorm:"size:40;not null"`
			RequestedByEmail string  `gorm:"size:320;not null"`
			DecidedBy        *string `gorm:"size:40"`
			DecidedByEmail   *string `gorm:"size:320"`
			DecisionNote     *string `gorm:"type:text"`
			DecidedAt        *time.Time
			RiskSnapshot     *string   `gorm:"type:text"`
			Version          int64     `gorm:"not null"`
			CreatedAt        time.Time `gorm:"not null"`
			UpdatedAt        time.Time `gorm:"not null"`
		}
		type dueNotice struct {
			ID       string `gorm:"primaryKey;size:40"`
			TenantID string `gorm:"size:40;not null"`
			Kind     string `gorm:"size:40;not null;uniqueIndex:idx_due_notices_once,priority:1"`
			ObjectID string `gorm:"size:40;not null;uniqueIndex:idx_due_notices_once,priority:2"`
			DueDate  string `gorm:"size:10;not null;uniqueIndex:idx_due_notices_once,priority:3"`
			// When it was emitted.
			CreatedAt time.Time `gorm:"not null"`
		}
		if err := tx.AutoMigrate(&riskReview{}, &riskAction{}, &acceptance{}, &dueNotice{}); err != nil {
			return err
		}
		return execAll(tx, []string{
			`ALTER TABLE risks ADD COLUMN review_every VARCHAR(3)`,
			`CREATE INDEX idx_risks_review_due ON risks (review_date) WHERE review_date IS NOT NULL`,
			`CREATE INDEX idx_risk_actions_due ON risk_actions (due_date) WHERE status = 'open'`,
			`CREATE INDEX idx_acceptances_valid ON acceptances (valid_until) WHERE status = 'approved'`,
		})
	},
	Rollback: func(tx *gorm.DB) error {
		if err := execAll(tx, []string{`DROP INDEX idx_risks_review_due`, `ALTER TABLE risks DROP COLUMN review_every`}); err != nil {
			return err
		}
		return tx.Migrator().DropTable("due_notices", "acceptances", "risk_actions", "risk_reviews")
	},
}
