package migrations

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0005Events creates the event outbox (docs/events.md): events, the tenants'
// webhook endpoints, the queued deliveries of events to endpoints, and the log of
// delivery attempts.
var m0005Events = &gormigrate.Migration{
	ID: "0005_events",
	Migrate: func(tx *gorm.DB) error {
		type event struct {
			// Listing pages newest first per tenant, and per tenant and type.
			ID       string `gorm:"primaryKey;size:40;index:idx_events_tenant_id,priority:2;index:idx_events_tenant_type_id,priority:3"`
			TenantID string `gorm:"size:40;not null;index:idx_events_tenant_id,priority:1;index:idx_events_tenant_type_id,priority:1"`
			Type     string `gorm:"size:40;not null;index:idx_events_tenant_type_id,priority:2"`
			// The event's JSON as delivered: built once, so every attempt signs the same bytes.
			Payload string `gorm:"type:text;not null"`
			// The sweep deletes by age through this index.
			CreatedAt time.Time `gorm:"not null;index"`
		}
		type webhookEndpoint struct {
			ID       string `gorm:"primaryKey;size:40"`
			TenantID string `gorm:"size:40;not null;index"`
			URL      string `gorm:"size:2048;not null"`
			Secret   string `gorm:"size:100;not null"`
			// "*" or ",type,type,": matched with LIKE when an event is queued.
			EventTypes string `gorm:"size:1000;not null"`
			CreatedAt  time.Time
		}
		type webhookDelivery struct {
			ID         int64  `gorm:"primaryKey;autoIncrement"`
			TenantID   string `gorm:"size:40;not null"`
			EventID    string `gorm:"size:40;not null;index"`
			EndpointID string `gorm:"size:40;not null;index"`
			// pending or failed (given up); the worker claims due pending rows and
			// deletes them once delivered (the attempts table is the log).
			State string `gorm:"size:16;not null;index:idx_webhook_deliveries_due,priority:1"`
			// When pending: when it is due; while claimed: when the claim's lease ends.
			NextAttemptAt time.Time `gorm:"not null;index:idx_webhook_deliveries_due,priority:2"`
			Attempts      int       `gorm:"not null"`
			// The fencing token of the current claim: only its holder may settle it.
			LeaseToken *string   `gorm:"size:32"`
			RetryUntil time.Time `gorm:"not null"`
			CreatedAt  time.Time `gorm:"not null"`
		}
		type webhookAttempt struct {
			// The delivery log pages newest first per endpoint.
			ID         int64  `gorm:"primaryKey;autoIncrement;index:idx_webhook_attempts_endpoint_id,priority:2"`
			TenantID   string `gorm:"size:40;not null"`
			EndpointID string `gorm:"size:40;not null;index:idx_webhook_attempts_endpoint_id,priority:1"`
			EventID    string `gorm:"size:40;not null;index"`
			DeliveryID int64  `gorm:"not null"`
			Attempt    int    `gorm:"not null"`
			StatusCode int    `gorm:"not null"`
			Error      string `gorm:"size:200;not null"`
			DurationMs int64  `gorm:"not null"`
			CreatedAt  time.Time
		}
		return tx.AutoMigrate(&event{}, &webhookEndpoint{}, &webhookDelivery{}, &webhookAttempt{})
	},
	Rollback: func(tx *gorm.DB) error {
		return tx.Migrator().DropTable("webhook_attempts", "webhook_deliveries", "webhook_endpoints", "events")
	},
}
