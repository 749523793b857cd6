package eventstore

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/events"
	"github.com/riskapi/riskapi/internal/secretkey"
)

type endpointRow struct {
	ID         string
	TenantID   string
	URL        string `gorm:"column:url"`
	Secret     string
	EventTypes string
	APIVersion string
	CreatedAt  time.Time `gorm:"autoCreateTime:false"`
	// Migration 0020.
	Description             string
	DisabledAt              *time.Time
	PreviousSecret          string // sealed like Secret; "" when none
	PreviousSecretExpiresAt *time.Time
	FailingSince            *time.Time
	// Migration 0025.
	Version int64
}

func (endpointRow) TableName() string { return "webhook_endpoints" }

// toEndpoint is r with its secrets opened.
func (s *Store) toEndpoint(r *endpointRow) (*events.Endpoint, error) {
	secret, err := s.openSecret(r.ID, r.Secret)
	if err != nil {
		return nil, err
	}
	prev := ""
	if r.PreviousSecret != "" {
		if prev, err = s.openSecret(r.ID, r.PreviousSecret); err != nil {
			return nil, err
		}
	}
	return &events.Endpoint{ID: r.ID, TenantID: r.TenantID, URL: r.URL, Secret: secret,
		Types: parseTypesColumn(r.EventTypes), APIVersion: r.APIVersion, CreatedAt: r.CreatedAt.UTC(), Description: r.Description,
		DisabledAt: utc(r.DisabledAt), PreviousSecret: prev, PreviousSecretExpiresAt: utc(r.PreviousSecretExpiresAt),
		FailingSince: utc(r.FailingSince), Version: r.Version}, nil
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

type attemptRow struct {
	ID         int64 `gorm:"primaryKey;autoIncrement"`
	TenantID   string
	EndpointID string
	EventID    string
	DeliveryID int64
	Attempt    int
	StatusCode int
	Error      string
	DurationMs int64
	CreatedAt  time.Time `gorm:"autoCreateTime:false"`
}

func (attemptRow) TableName() string { return "webhook_attempts" }

// CreateEndpoint inserts e, its secret sealed, and records webhook_endpoint.created.
func (s *Store) CreateEndpoint(ctx context.Context, e *events.Endpoint) error {
	sealed, err := s.sealSecret(e.ID, e.Secret)
	if err != nil {
		return err
	}
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		row := &endpointRow{ID: e.ID, TenantID: e.TenantID, URL: e.URL, Secret: sealed,
			EventTypes: typesColumn(e.Types), APIVersion: e.APIVersion, CreatedAt: e.CreatedAt.UTC(), Description: e.Description,
			Version: 1}
		if err := database.Conn(ctx, s.db).Create(row).Error; err != nil {
			return changes.Change{}, fmt.Errorf("create endpoint: %w", err)
		}
		return endpointChange(changes.WebhookEndpointCreated, e, false, true), nil
	})
}

// LockEndpoints takes the tenant's endpoint lock for the rest of the transaction
// ctx carries (database.LockXact).
func (s *Store) LockEndpoints(ctx context.Context, tenantID string) error {
	return database.LockXact(ctx, s.db, s.dialect, "webhook-endpoints", tenantID)
}

// Endpoints returns the tenant's endpoints, oldest first.
func (s *Store) Endpoints(ctx context.Context, tenantID string) ([]*events.Endpoint, error) {
	var rows []endpointRow
	if err := s.tenant(ctx, tenantID).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list endpoints: %w", err)
	}
	return s.toEndpoints(rows)
}

func (s *Store) toEndpoints(rows []endpointRow) ([]*events.Endpoint, error) {
	out := make([]*events.Endpoint, len(rows))
	for i := range rows {
		e, err := s.toEndpoint(&rows[i])
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// sealSecret returns the column value of an endpoint's secret ("whsec_" + standard
// base64 of 32 bytes): the bytes, sealed under SECRET_KEY for the endpoint's ID.
func (s *Store) sealSecret(id, secret string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, events.SecretPrefix))
	if err != nil || !strings.HasPrefix(secret, events.SecretPrefix) {
		return "", errors.New("endpoint secret is not whsec_ and base64")
	}
	return s.sealer.Seal(id, raw)
}

// openSecret returns the secret of a column value; one not sealed was written
// before secrets were sealed (SealLegacy seals those) and is the secret itself.
func (s *Store) openSecret(id, stored string) (string, error) {
	if !secretkey.Sealed(stored) {
		return stored, nil
	}
	raw, err := s.sealer.Open(id, stored)
	if err != nil {
		return "", fmt.Errorf("webhook endpoint: %w", err)
	}
	return events.SecretPrefix + base64.StdEncoding.EncodeToString(raw), nil
}

// Reseal re-seals, under this store's key, the endpoint secrets sealed under old
// (the sealing key of a previous SECRET_KEY: docs/security.md, Rotating) and
// returns how many. Safe on several instances at once, like SealLegacy.
func (s *Store) Reseal(ctx context.Context, old []byte) (int, error) {
	prev, err := secretkey.NewSealer(old)
	if err != nil {
		return 0, err
	}
	var rows []endpointRow
	if err := s.db.WithContext(ctx).Where("secret LIKE ?", "v1.%").Find(&rows).Error; err != nil {
		return 0, fmt.Errorf("find sealed endpoint secrets: %w", err)
	}
	n := 0
	for _, r := range rows {
		if _, err := s.sealer.Open(r.ID, r.Secret); err == nil {
			continue
		}
		raw, err := prev.Open(r.ID, r.Secret)
		if err != nil {
			return n, fmt.Errorf("webhook endpoint: %w", err)
		}
		sealed, err := s.sealer.Seal(r.ID, raw)
		if err != nil {
			return n, err
		}
		res := s.db.WithContext(ctx).Model(&endpointRow{}).Where("id = ? AND secret = ?", r.ID, r.Secret).
			Update("secret", sealed)
		if res.Error != nil {
			return n, fmt.Errorf("re-seal endpoint secret: %w", res.Error)
		}
		n += int(res.RowsAffected)
	}
	return n, nil
}

// SealLegacy seals the secrets of endpoints created before they were sealed and
// returns how many it sealed. Safe on several instances at once: a row is
// rewritten only while it still holds the plain secret.
func (s *Store) SealLegacy(ctx context.Context) (int, error) {
	var rows []endpointRow
	if err := s.db.WithContext(ctx).Where("secret NOT LIKE ?", "v1.%").Find(&rows).Error; err != nil {
		return 0, fmt.Errorf("find unsealed endpoint secrets: %w", err)
	}
	n := 0
	for _, r := range rows {
		sealed, err := s.sealSecret(r.ID, r.Secret)
		if err != nil {
			return n, fmt.Errorf("webhook endpoint %s: %w", r.ID, err)
		}
		res := s.db.WithContext(ctx).Model(&endpointRow{}).Where("id = ? AND secret = ?", r.ID, r.Secret).
			Update("secret", sealed)
		if res.Error != nil {
			return n, fmt.Errorf("seal endpoint secret: %w", res.Error)
		}
		n += int(res.RowsAffected)
	}
	return n, nil
}

// DeleteEndpoint deletes the tenant's endpoint, its queued deliveries and its
// delivery log in one transaction and records webhook_endpoint.deleted, or returns
// events.ErrEndpointNotFound.
func (s *Store) DeleteEndpoint(ctx context.Context, tenantID, id string) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		conn := database.Conn(ctx, s.db)
		var row endpointRow
		err := s.tenant(ctx, tenantID).Select("id", "tenant_id", "url", "event_types").Where("id = ?", id).Take(&row).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return changes.Change{}, events.ErrEndpointNotFound
		}
		if err != nil {
			return changes.Change{}, fmt.Errorf("delete endpoint: %w", err)
		}
		res := s.tenant(ctx, tenantID).Where("id = ?", id).Delete(&endpointRow{})
		if res.Error != nil {
			return changes.Change{}, fmt.Errorf("delete endpoint: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return changes.Change{}, events.ErrEndpointNotFound
		}
		for _, table := range []string{"webhook_deliveries", "webhook_attempts"} {
			if err := conn.Exec("DELETE FROM "+table+" WHERE endpoint_id = ?", id).Error; err != nil {
				return changes.Change{}, fmt.Errorf("delete endpoint's %s: %w", table, err)
			}
		}
		e := &events.Endpoint{ID: row.ID, TenantID: row.TenantID, URL: row.URL, Types: parseTypesColumn(row.EventTypes)}
		return endpointChange(changes.WebhookEndpointDeleted, e, true, false), nil
	})
}

// Attempts returns a page of the endpoint's delivery log, newest first.
func (s *Store) Attempts(ctx context.Context, tenantID, endpointID string, f events.AttemptFilter) ([]*events.Attempt, bool, error) {
	var ep endpointRow
	err := s.tenant(ctx, tenantID).Select("id").Where("id = ?", endpointID).Take(&ep).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, false, events.ErrEndpointNotFound
	}
	if err != nil {
		return nil, false, fmt.Errorf("get endpoint: %w", err)
	}
	q := database.Conn(ctx, s.db).Where("endpoint_id = ?", endpointID)
	out, more, err := database.Page(q, database.NewestFirst, max(f.Before, 0), f.Limit, toAttempt)
	if err != nil {
		return nil, false, fmt.Errorf("list attempts: %w", err)
	}
	return out, more, nil
}

func toAttempt(r *attemptRow) *events.Attempt {
	return &events.Attempt{ID: r.ID, EndpointID: r.EndpointID, EventID: r.EventID, N: r.Attempt,
		StatusCode: r.StatusCode, Error: r.Error, Duration: time.Duration(r.DurationMs) * time.Millisecond,
		CreatedAt: r.CreatedAt.UTC()}
}
