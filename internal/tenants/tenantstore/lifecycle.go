package tenantstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/tenants/tenantview"
)

// RollAPIKey ends old at expiresAt, names next its successor and inserts next, in
// one unit of work recording api_key.rolled (old) and api_key.created (next). The
// old key's row changes only if it is still unrolled and unrevoked, so two rolls at
// once make one successor: the second gets tenants.ErrAPIKeyRolled.
func (s *Store) RollAPIKey(ctx context.Context, old tenants.APIKey, expiresAt time.Time, next tenants.APIKey, secretHash string) error {
	return s.point.WriteAll(ctx, func(ctx context.Context) ([]changes.Change, error) {
		at := expiresAt.UTC()
		res := database.Conn(ctx, s.db).Model(&apiKeyRow{}).
			Where("id = ? AND revoked_at IS NULL AND rolled_to = ''", old.ID).
			Updates(map[string]any{"expires_at": at, "rolled_to": next.ID})
		if res.Error != nil {
			return nil, fmt.Errorf("roll api key: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return nil, tenants.ErrAPIKeyRolled
		}
		row := keyRow(next, secretHash)
		if err := database.Conn(ctx, s.db).Create(&row).Error; err != nil {
			return nil, fmt.Errorf("create api key: %w", err)
		}
		after := old
		after.ExpiresAt, after.RolledTo = &at, next.ID
		return []changes.Change{keyChange(changes.APIKeyRolled, &old, after), keyChange(changes.APIKeyCreated, nil, next)}, nil
	})
}

// RecordAPIKeyExpired marks k's expiry recorded and records api_key.expired, once:
// a key marked already (by another request or instance) records nothing.
func (s *Store) RecordAPIKeyExpired(ctx context.Context, k tenants.APIKey, at time.Time) error {
	err := s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		res := database.Conn(ctx, s.db).Model(&apiKeyRow{}).Where("id = ? AND expiry_recorded_at IS NULL", k.ID).
			Update("expiry_recorded_at", at.UTC())
		if res.Error != nil {
			return changes.Change{}, fmt.Errorf("record api key expiry: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return changes.Change{}, errRecordedAlready
		}
		return changes.Change{TenantID: k.TenantID, Action: changes.APIKeyExpired, Target: changes.Target{ID: k.ID},
			Before: expiry{Expired: false}, After: expiry{Expired: true}}, nil
	})
	if errors.Is(err, errRecordedAlready) {
		return nil
	}
	return err
}

// errRecordedAlready undoes a record that another writer made first.
var errRecordedAlready = errors.New("recorded already")

// expiry is what api_key.expired's entry shows of the key.
type expiry struct {
	Expired bool `json:"expired"`
}

// Resource implements changes.View.
func (expiry) Resource() string { return tenantview.APIKey{}.Resource() }

// ExpiredAPIKeys returns up to limit unrevoked keys past their expiry, unrecorded,
// oldest expiry first, through idx_api_keys_expires_at.
func (s *Store) ExpiredAPIKeys(ctx context.Context, now time.Time, limit int) ([]tenants.APIKey, error) {
	var rows []apiKeyRow
	err := database.Conn(ctx, s.db).Where("expires_at <= ? AND expiry_recorded_at IS NULL AND revoked_at IS NULL", now.UTC()).
		Order("expires_at").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("find expired api keys: %w", err)
	}
	out := make([]tenants.APIKey, len(rows))
	for i, r := range rows {
		out[i] = r.toKey()
	}
	return out, nil
}

// RecordAPIKeyRefused records api_key.refused for k; it writes nothing else.
func (s *Store) RecordAPIKeyRefused(ctx context.Context, k tenants.APIKey) error {
	return s.point.Write(ctx, func(context.Context) (changes.Change, error) {
		return changes.Change{TenantID: k.TenantID, Action: changes.APIKeyRefused, Target: changes.Target{ID: k.ID}}, nil
	})
}
