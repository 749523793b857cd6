// Package riskstore stores risks with GORM on SQLite or PostgreSQL. Its row type and
// GORM tags stay here; the domain type knows nothing of them.
package riskstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/risks"
)

// Store implements risks.Store.
type Store struct{ db *gorm.DB }

var _ risks.Store = (*Store)(nil)

// New returns a Store over db.
func New(db *gorm.DB) *Store { return &Store{db: db} }

type row struct {
	ID          string
	TenantID    string
	Title       string
	Description string
	Category    string
	Likelihood  *int
	Impact      *int
	RiskScore   *int
	Status      string
	Owner       string
	ExternalID  *string
	// The domain sets both timestamps from its injected clock (truncated to what
	// PostgreSQL keeps); GORM must not overwrite them with its own "now", or a risk
	// would read back with another updatedAt than the write returned.
	CreatedAt time.Time `gorm:"autoCreateTime:false"`
	UpdatedAt time.Time `gorm:"autoUpdateTime:false"`
}

func (row) TableName() string { return "risks" }

func toRow(r *risks.Risk) *row {
	return &row{ID: r.ID, TenantID: r.TenantID, Title: r.Title, Description: r.Description,
		Category: r.Category, Likelihood: r.Likelihood, Impact: r.Impact, RiskScore: r.RiskScore,
		Status: string(r.Status), Owner: r.Owner, ExternalID: r.ExternalID,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

func toRisk(w *row) *risks.Risk {
	return &risks.Risk{ID: w.ID, TenantID: w.TenantID, Title: w.Title, Description: w.Description,
		Category: w.Category, Likelihood: w.Likelihood, Impact: w.Impact, RiskScore: w.RiskScore,
		Status: risks.Status(w.Status), Owner: w.Owner, ExternalID: w.ExternalID,
		CreatedAt: w.CreatedAt.UTC(), UpdatedAt: w.UpdatedAt.UTC()}
}

// Create inserts r.
func (s *Store) Create(ctx context.Context, r *risks.Risk) error {
	if err := database.Conn(ctx, s.db).Create(toRow(r)).Error; err != nil {
		return fmt.Errorf("create risk: %w", err)
	}
	return nil
}

// tenant is a statement on the tenant's risks only, in ctx's unit of work.
func (s *Store) tenant(ctx context.Context, tenantID string) *gorm.DB {
	return database.Conn(ctx, s.db).Scopes(database.OfTenant(tenantID))
}

// Get returns the tenant's risk with id, or risks.ErrNotFound.
func (s *Store) Get(ctx context.Context, tenantID, id string) (*risks.Risk, error) {
	return s.take(ctx, tenantID, "get risk "+id, false, "id = ?", id)
}

// GetForUpdate is Get with the row locked (risks.Store.GetForUpdate). The SQLite
// dialect leaves the locking clause out: there the transaction holds the write lock.
func (s *Store) GetForUpdate(ctx context.Context, tenantID, id string) (*risks.Risk, error) {
	return s.take(ctx, tenantID, "get risk "+id+" for update", true, "id = ?", id)
}

// GetByExternalID returns the tenant's risk with that external ID, or
// risks.ErrNotFound.
func (s *Store) GetByExternalID(ctx context.Context, tenantID, externalID string) (*risks.Risk, error) {
	return s.take(ctx, tenantID, "get risk by external id", false, "external_id = ?", externalID)
}

// take reads the tenant's one row matching where, locked FOR UPDATE when lock is set.
func (s *Store) take(ctx context.Context, tenantID, what string, lock bool, where string, args ...any) (*risks.Risk, error) {
	var w row
	q := s.tenant(ctx, tenantID).Where(where, args...)
	if lock {
		q = q.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate})
	}
	err := q.Take(&w).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, risks.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return toRisk(&w), nil
}

// List returns up to f.Limit of the tenant's risks, newest first (IDs are UUIDv7, so
// ID order is creation order and stable), and whether more follow.
func (s *Store) List(ctx context.Context, tenantID string, f risks.Filter) ([]*risks.Risk, bool, error) {
	out, more, err := database.Page(s.tenant(ctx, tenantID), database.NewestFirst, f.Before, f.Limit, toRisk)
	if err != nil {
		return nil, false, fmt.Errorf("list risks: %w", err)
	}
	return out, more, nil
}

// Update stores every field of r, or returns risks.ErrNotFound.
func (s *Store) Update(ctx context.Context, r *risks.Risk) error {
	w := toRow(r)
	res := s.tenant(ctx, r.TenantID).Model(&row{}).Where("id = ?", r.ID).
		Select("title", "description", "category", "likelihood", "impact", "risk_score",
			"status", "owner", "external_id", "updated_at").Updates(w)
	if res.Error != nil {
		return fmt.Errorf("update risk %s: %w", r.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		return risks.ErrNotFound
	}
	return nil
}

// Delete removes the tenant's risk with id, or returns risks.ErrNotFound.
func (s *Store) Delete(ctx context.Context, tenantID, id string) error {
	res := s.tenant(ctx, tenantID).Where("id = ?", id).Delete(&row{})
	if res.Error != nil {
		return fmt.Errorf("delete risk %s: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return risks.ErrNotFound
	}
	return nil
}
