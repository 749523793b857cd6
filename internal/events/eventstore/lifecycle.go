package eventstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/events"
	"github.com/riskapi/riskapi/internal/events/endpointview"
)

// skippedError is the delivery log's entry for an event that arrived while its
// endpoint was disabled: attempt 0, no status (docs/events.md).
const skippedError = "skipped: the endpoint was disabled"

// Endpoint returns the tenant's endpoint with id, or events.ErrEndpointNotFound.
func (s *Store) Endpoint(ctx context.Context, tenantID, id string) (*events.Endpoint, error) {
	var row endpointRow
	err := s.tenant(ctx, tenantID).Where("id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, events.ErrEndpointNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get endpoint: %w", err)
	}
	return s.toEndpoint(&row)
}

// SaveEndpoint writes after and records action, in one unit of work; a disable
// turns the endpoint's queued deliveries into skipped entries of its log.
func (s *Store) SaveEndpoint(ctx context.Context, before, after *events.Endpoint, action changes.Action) error {
	sealed, err := s.sealSecret(after.ID, after.Secret)
	if err != nil {
		return err
	}
	prev := ""
	if after.PreviousSecret != "" {
		if prev, err = s.sealSecret(after.ID, after.PreviousSecret); err != nil {
			return err
		}
	}
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		res := s.tenant(ctx, after.TenantID).Model(&endpointRow{}).Where("id = ? AND version = ?", after.ID, before.Version).Updates(map[string]any{
			"version": after.Version, "url": after.URL, "event_types": typesColumn(after.Types), "description": after.Description,
			"api_version": after.APIVersion,
			"disabled_at": utc(after.DisabledAt), "secret": sealed, "previous_secret": prev,
			"previous_secret_expires_at": utc(after.PreviousSecretExpiresAt), "failing_since": utc(after.FailingSince),
		})
		if res.Error != nil {
			return changes.Change{}, fmt.Errorf("save endpoint: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return changes.Change{}, events.ErrEndpointNotFound
		}
		if before.DisabledAt == nil && after.DisabledAt != nil {
			if err := s.skipQueued(ctx, after); err != nil {
				return changes.Change{}, err
			}
		}
		c := changes.Change{TenantID: after.TenantID, Action: action, Target: changes.Target{ID: after.ID},
			Before: endpointview.Of(before), After: endpointview.Of(after)}
		if before.Secret != after.Secret {
			c.Secret = []string{"secret"}
		}
		return c, nil
	})
}

// skipQueued moves e's pending deliveries out of the queue into its delivery log
// as skipped; an attempt in flight finds its claim gone and is not logged.
func (s *Store) skipQueued(ctx context.Context, e *events.Endpoint) error {
	conn := database.Conn(ctx, s.db)
	at := e.DisabledAt.UTC()
	if err := conn.Exec(`INSERT INTO webhook_attempts
		(tenant_id, endpoint_id, event_id, delivery_id, attempt, status_code, error, duration_ms, created_at)
		SELECT tenant_id, endpoint_id, event_id, id, 0, 0, ?, 0, ? FROM webhook_deliveries
		WHERE endpoint_id = ? AND state = 'pending'`, skippedError, at, e.ID).Error; err != nil {
		return fmt.Errorf("skip queued deliveries: %w", err)
	}
	if err := conn.Exec(`DELETE FROM webhook_deliveries WHERE endpoint_id = ? AND state = 'pending'`,
		e.ID).Error; err != nil {
		return fmt.Errorf("skip queued deliveries: %w", err)
	}
	return nil
}

// FailingEndpoints returns the enabled endpoints failing since at or before since,
// through idx_webhook_endpoints_failing_since.
func (s *Store) FailingEndpoints(ctx context.Context, since time.Time) ([]*events.Endpoint, error) {
	var rows []endpointRow
	err := database.Conn(ctx, s.db).Where("failing_since <= ? AND disabled_at IS NULL", since.UTC()).
		Order("failing_since").Limit(100).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("find failing endpoints: %w", err)
	}
	return s.toEndpoints(rows)
}
