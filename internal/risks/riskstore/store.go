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

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskview"
)

// Store implements risks.Store. Each write records its change (risk.created,
// risk.updated, risk.deleted, with the risk as riskview shows it) through its
// changes.Point, in the write's own unit of work.
type Store struct {
	db    *gorm.DB
	point changes.Point
}

var _ risks.Store = (*Store)(nil)

// New returns a Store over db whose writes record through rec (required: without it
// every write fails with changes.ErrNoRecorder).
func New(db *gorm.DB, rec changes.Recorder) *Store {
	return &Store{db: db, point: changes.Point{Tx: database.NewRunner(db), Recorder: rec}}
}

// change is the record of a write of r: before nil for a creation, after nil for a
// deletion.
func change(action changes.Action, before, after *risks.Risk) changes.Change {
	c := changes.Change{Action: action, Target: changes.Target{Type: "risk"}}
	if before != nil {
		c.TenantID, c.Target.ID, c.Before = before.TenantID, before.ID, riskview.Of(before)
	}
	if after != nil {
		c.TenantID, c.Target.ID, c.After = after.TenantID, after.ID, riskview.Of(after)
	}
	return c
}

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
	Version     int64
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
		Status: string(r.Status), Owner: r.Owner, ExternalID: r.ExternalID, Version: r.Version,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

func toRisk(w *row) *risks.Risk {
	return &risks.Risk{ID: w.ID, TenantID: w.TenantID, Title: w.Title, Description: w.Description,
		Category: w.Category, Likelihood: w.Likelihood, Impact: w.Impact, RiskScore: w.RiskScore,
		Status: risks.Status(w.Status), Owner: w.Owner, ExternalID: w.ExternalID, Version: w.Version,
		CreatedAt: w.CreatedAt.UTC(), UpdatedAt: w.UpdatedAt.UTC()}
}

// Create inserts r and records risk.created.
func (s *Store) Create(ctx context.Context, r *risks.Risk) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		if err := database.Conn(ctx, s.db).Create(toRow(r)).Error; err != nil {
			return changes.Change{}, fmt.Errorf("create risk: %w", database.Classify(err))
		}
		return change(risks.ActionCreated, nil, r), nil
	})
}

// Get returns the tenant's risk with id, or risks.ErrNotFound.
func (s *Store) Get(ctx context.Context, tenantID, id string) (*risks.Risk, error) {
	return s.take(ctx, "get risk "+id, false, "tenant_id = ? AND id = ?", tenantID, id)
}

// GetForUpdate is Get with the row locked (risks.Store.GetForUpdate). The SQLite
// dialect leaves the locking clause out: there the transaction holds the write lock.
func (s *Store) GetForUpdate(ctx context.Context, tenantID, id string) (*risks.Risk, error) {
	return s.take(ctx, "get risk "+id+" for update", true, "tenant_id = ? AND id = ?", tenantID, id)
}

// GetByExternalID returns the tenant's risk with that external ID, or
// risks.ErrNotFound.
func (s *Store) GetByExternalID(ctx context.Context, tenantID, externalID string) (*risks.Risk, error) {
	return s.take(ctx, "get risk by external id", false, "tenant_id = ? AND external_id = ?", tenantID, externalID)
}

// take reads the one row matching where, locked FOR UPDATE when lock is set.
func (s *Store) take(ctx context.Context, what string, lock bool, where string, args ...any) (*risks.Risk, error) {
	var w row
	q := database.Conn(ctx, s.db).Where(where, args...)
	if lock {
		q = q.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate})
	}
	err := q.Take(&w).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, risks.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, database.Classify(err))
	}
	return toRisk(&w), nil
}

// List returns up to f.Limit of the tenant's risks, newest first (IDs are UUIDv7, so
// ID order is creation order and stable), and whether more follow.
func (s *Store) List(ctx context.Context, tenantID string, f risks.Filter) ([]*risks.Risk, bool, error) {
	q := database.Conn(ctx, s.db).Where("tenant_id = ?", tenantID)
	if f.Before != "" {
		q = q.Where("id < ?", f.Before)
	}
	var rows []row
	if err := q.Order("id DESC").Limit(f.Limit + 1).Find(&rows).Error; err != nil {
		return nil, false, fmt.Errorf("list risks: %w", database.Classify(err))
	}
	more := len(rows) > f.Limit
	if more {
		rows = rows[:f.Limit]
	}
	out := make([]*risks.Risk, len(rows))
	for i := range rows {
		out[i] = toRisk(&rows[i])
	}
	return out, more, nil
}

// Update stores every field of after over before and records risk.updated. It
// writes only over before's version: risks.ErrVersionChanged when the stored
// version is another, risks.ErrNotFound when there is no such risk.
func (s *Store) Update(ctx context.Context, before, after *risks.Risk) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		res := database.Conn(ctx, s.db).Model(&row{}).
			Where("tenant_id = ? AND id = ? AND version = ?", before.TenantID, before.ID, before.Version).
			Select("title", "description", "category", "likelihood", "impact", "risk_score",
				"status", "owner", "external_id", "version", "updated_at").Updates(toRow(after))
		if res.Error != nil {
			return changes.Change{}, fmt.Errorf("update risk %s: %w", after.ID, database.Classify(res.Error))
		}
		if res.RowsAffected == 0 {
			return changes.Change{}, s.missed(ctx, before)
		}
		return change(risks.ActionUpdated, before, after), nil
	})
}

// Delete removes r and records risk.deleted with r as it was. Like Update it
// deletes only r's version: risks.ErrVersionChanged, risks.ErrNotFound.
func (s *Store) Delete(ctx context.Context, r *risks.Risk) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		res := database.Conn(ctx, s.db).Where("tenant_id = ? AND id = ? AND version = ?", r.TenantID, r.ID, r.Version).
			Delete(&row{})
		if res.Error != nil {
			return changes.Change{}, fmt.Errorf("delete risk %s: %w", r.ID, database.Classify(res.Error))
		}
		if res.RowsAffected == 0 {
			return changes.Change{}, s.missed(ctx, r)
		}
		return change(risks.ActionDeleted, r, nil), nil
	})
}

// missed says why a write of r's version found no row: risks.ErrVersionChanged
// when the risk is there at another version, risks.ErrNotFound when it is not.
func (s *Store) missed(ctx context.Context, r *risks.Risk) error {
	if _, err := s.Get(ctx, r.TenantID, r.ID); err != nil {
		return err
	}
	return risks.ErrVersionChanged
}
