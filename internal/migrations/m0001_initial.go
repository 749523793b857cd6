package migrations

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0001Initial creates tenants, credentials, risks, attachments, webhooks and
// idempotency records.
var m0001Initial = &gormigrate.Migration{
	ID: "0001_initial",
	Migrate: func(tx *gorm.DB) error {
		if err := m0001Accounts(tx); err != nil {
			return err
		}
		return m0001Records(tx)
	},
	Rollback: func(tx *gorm.DB) error {
		return tx.Migrator().DropTable("idempotency_records", "webhook_events", "webhook_sources",
			"attachments", "risks", "settings", "sessions", "api_keys", "users", "tenants")
	},
}

// m0001Accounts creates the tables of tenants and their credentials. The row types
// are local so that GORM names each table after its type, as it did when this
// migration first ran.
func m0001Accounts(tx *gorm.DB) error {
	type tenant struct {
		ID        string `gorm:"primaryKey;size:40"`
		Name      string `gorm:"size:200;not null"`
		CreatedAt time.Time
	}
	type user struct {
		ID           string `gorm:"primaryKey;size:40"`
		TenantID     string `gorm:"size:40;not null;index"`
		Email        string `gorm:"size:320;not null;uniqueIndex"`
		PasswordHash string `gorm:"size:200;not null"`
		CreatedAt    time.Time
	}
	type apiKey struct {
		ID         string `gorm:"primaryKey;size:40"`
		TenantID   string `gorm:"size:40;not null;index"`
		Name       string `gorm:"size:200"`
		SecretHash string `gorm:"size:64;not null;uniqueIndex"`
		Scopes     string `gorm:"size:200;not null"`
		CreatedAt  time.Time
		RevokedAt  *time.Time
		LastUsedAt *time.Time
	}
	type session struct {
		ID        string `gorm:"primaryKey;size:64"`
		UserID    string `gorm:"size:40;not null;index"`
		TenantID  string `gorm:"size:40;not null"`
		CreatedAt time.Time
		ExpiresAt time.Time `gorm:"not null;index"`
		RevokedAt *time.Time
	}
	type setting struct {
		Name  string `gorm:"primaryKey;size:100"`
		Value string `gorm:"size:1000;not null"`
	}
	return tx.AutoMigrate(&tenant{}, &user{}, &apiKey{}, &session{}, &setting{})
}

// m0001Records creates the tables of risks, attachments, inbound webhooks and
// idempotency records.
func m0001Records(tx *gorm.DB) error {
	type risk struct {
		ID          string `gorm:"primaryKey;size:40"`
		TenantID    string `gorm:"size:40;not null;index:idx_risks_tenant_id_id,priority:1;uniqueIndex:idx_risks_tenant_external,priority:1"`
		Title       string `gorm:"size:200;not null"`
		Description string `gorm:"type:text;not null"`
		Category    string `gorm:"size:100;not null"`
		Likelihood  *int
		Impact      *int
		RiskScore   *int
		Status      string  `gorm:"size:20;not null"`
		Owner       string  `gorm:"size:200;not null"`
		ExternalID  *string `gorm:"size:200;uniqueIndex:idx_risks_tenant_external,priority:2"`
		CreatedAt   time.Time
		UpdatedAt   time.Time
	}
	type attachment struct {
		ID          string `gorm:"primaryKey;size:40"`
		TenantID    string `gorm:"size:40;not null;index"`
		RiskID      string `gorm:"size:40;not null;index"`
		Filename    string `gorm:"size:255;not null"`
		ContentType string `gorm:"size:255;not null"`
		Size        int64  `gorm:"not null"`
		SHA256      string `gorm:"column:sha256;size:64;not null"`
		Description string `gorm:"type:text;not null"`
		CreatedAt   time.Time
	}
	type webhookSource struct {
		ID        string `gorm:"primaryKey;size:40"`
		TenantID  string `gorm:"size:40;not null;index"`
		Source    string `gorm:"size:100;not null;uniqueIndex"`
		Secret    string `gorm:"size:100;not null"`
		CreatedAt time.Time
	}
	type webhookEvent struct {
		SourceID   string `gorm:"primaryKey;size:40"`
		EventID    string `gorm:"primaryKey;size:200"`
		ReceivedAt time.Time
	}
	type idempotencyRecord struct {
		Scope       string `gorm:"primaryKey;size:64"`
		Method      string `gorm:"primaryKey;size:10"`
		Path        string `gorm:"primaryKey;size:512"`
		IdemKey     string `gorm:"primaryKey;size:128"`
		Fingerprint string `gorm:"size:64;not null"`
		State       string `gorm:"size:16;not null"`
		StatusCode  int    `gorm:"not null"`
		ContentType string `gorm:"size:255;not null"`
		Body        []byte
		CreatedAt   time.Time
		UpdatedAt   time.Time
		// The sweep scans this index oldest first.
		ExpiresAt time.Time `gorm:"not null;index"`
	}
	return tx.AutoMigrate(&risk{}, &attachment{}, &webhookSource{}, &webhookEvent{}, &idempotencyRecord{})
}
