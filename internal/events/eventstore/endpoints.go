package eventstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/events"
)

type endpointRow struct {
	ID         string
	TenantID   string
	URL        string `gorm:"column:url"`
	Secret     string
	EventTypes string
	CreatedAt  time.Time `gorm:"autoCreateTime:false"`
}

func (endpointRow) TableName() string { return "webhook_endpoints" }

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

// CreateEndpoint inserts e.
func (s *Store) CreateEndpoint(ctx context.Context, e *events.Endpoint) error {
	row := &endpointRow{ID: e.ID, TenantID: e.TenantID, URL: e.URL, Secret: e.Secret,
		EventTypes: typesColumn(e.Types), CreatedAt: e.CreatedAt.UTC()}
	if err := database.Conn(ctx, s.db).Create(row).Error; err != nil {
		return fmt.Errorf("create endpoint: %w", err)
	}
	return nil
}

// Endpoints returns the tenant's endpoints, oldest first.
func (s *Store) Endpoints(ctx context.Context, tenantID string) ([]*events.Endpoint, error) {
	var rows []endpointRow
	if err := s.tenant(ctx, tenantID).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list endpoints: %w", err)
	}
	out := make([]*events.Endpoint, len(rows))
	for i, r := range rows {
		out[i] = &events.Endpoint{ID: r.ID, TenantID: r.TenantID, URL: r.URL, Secret: r.Secret,
			Types: parseTypesColumn(r.EventTypes), CreatedAt: r.CreatedAt.UTC()}
	}
	return out, nil
}

// DeleteEndpoint deletes the tenant's endpoint, its queued deliveries and its
// delivery log in one transaction, or returns events.ErrEndpointNotFound.
func (s *Store) DeleteEndpoint(ctx context.Context, tenantID, id string) error {
	return database.RunInTx(ctx, s.db, func(ctx context.Context) error {
		conn := database.Conn(ctx, s.db)
		res := s.tenant(ctx, tenantID).Where("id = ?", id).Delete(&endpointRow{})
		if res.Error != nil {
			return fmt.Errorf("delete endpoint: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return events.ErrEndpointNotFound
		}
		for _, table := range []string{"webhook_deliveries", "webhook_attempts"} {
			if err := conn.Exec("DELETE FROM "+table+" WHERE endpoint_id = ?", id).Error; err != nil {
				return fmt.Errorf("delete endpoint's %s: %w", table, err)
			}
		}
		return nil
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
