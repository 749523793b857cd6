// Package riskstore stores risks with GORM on SQLite or PostgreSQL. Its row type and
// GORM tags stay here; the domain type knows nothing of them.
package riskstore

import (
	"context"
	"encoding/json"
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
	// walkWindow replaces the constant walkWindow when positive (tests).
	walkWindow int
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
	// OwnerUserID is the tenant's user who owns the risk, nil for a name owner.
	OwnerUserID *string
	ExternalID  *string
	Version     int64
	Treatment   *string
	ReviewDate  *string // YYYY-MM-DD, so text order is date order
	ReviewEvery *string
	// ResidualScore is stored, though derived, so lists could filter on it alone.
	ResidualLikelihood *int
	ResidualImpact     *int
	ResidualScore      *int
	Metadata           string // a JSON object of strings, "{}" when empty
	// The domain sets both timestamps from its injected clock (truncated to what
	// PostgreSQL keeps); GORM must not overwrite them with its own "now", or a risk
	// would read back with another updatedAt than the write returned.
	CreatedAt time.Time `gorm:"autoCreateTime:false"`
	UpdatedAt time.Time `gorm:"autoUpdateTime:false"`
}

func (row) TableName() string { return "risks" }

func toRow(r *risks.Risk) *row {
	var treatment *string
	if r.Treatment != nil {
		t := string(*r.Treatment)
		treatment = &t
	}
	return &row{ID: r.ID, TenantID: r.TenantID, Title: r.Title, Description: r.Description,
		Category: r.Category, Likelihood: r.Likelihood, Impact: r.Impact, RiskScore: r.RiskScore,
		Status: string(r.Status), Owner: r.Owner, OwnerUserID: r.OwnerUserID, ExternalID: r.ExternalID, Version: r.Version,
		Treatment: treatment, ReviewDate: r.ReviewDate, ReviewEvery: (*string)(r.ReviewEvery), ResidualLikelihood: r.ResidualLikelihood,
		ResidualImpact: r.ResidualImpact, ResidualScore: r.ResidualScore, Metadata: metadataText(r.Metadata),
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

func toRisk(w *row) *risks.Risk {
	var treatment *risks.Treatment
	if w.Treatment != nil {
		t := risks.Treatment(*w.Treatment)
		treatment = &t
	}
	return &risks.Risk{ID: w.ID, TenantID: w.TenantID, Title: w.Title, Description: w.Description,
		Category: w.Category, Likelihood: w.Likelihood, Impact: w.Impact, RiskScore: w.RiskScore,
		Status: risks.Status(w.Status), Owner: w.Owner, OwnerUserID: w.OwnerUserID, ExternalID: w.ExternalID, Version: w.Version,
		Treatment: treatment, ReviewDate: w.ReviewDate, ReviewEvery: (*risks.Cadence)(w.ReviewEvery), ResidualLikelihood: w.ResidualLikelihood,
		ResidualImpact: w.ResidualImpact, ResidualScore: w.ResidualScore, Metadata: metadataOf(w.Metadata),
		CreatedAt: w.CreatedAt.UTC(), UpdatedAt: w.UpdatedAt.UTC()}
}

// metadataText is m as the metadata column keeps it: a JSON object, keys sorted.
func metadataText(m map[string]string) string {
	if len(m) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(m) // a map of strings always marshals
	return string(b)
}

// metadataOf reads the metadata column; nil when empty, as the domain keeps it. The
// column only ever holds what metadataText wrote (or the migration's "{}").
func metadataOf(s string) map[string]string {
	var m map[string]string
	if json.Unmarshal([]byte(s), &m) != nil || len(m) == 0 {
		return nil
	}
	return m
}

// Create inserts r and records risk.created. On PostgreSQL the INSERT is deferred
// (database.Defer; nothing reads the row before the write's unit of work, Point.Write,
// ends): the event's statement carries it, and when the create is its own unit of
// work (an unkeyed POST) the risk, its audit entry and its event are one autocommit
// statement.
func (s *Store) Create(ctx context.Context, r *risks.Risk) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		var err error
		if s.db.Dialector.Name() == string(database.Postgres) {
			err = database.Defer(ctx, s.db, insertSQL, values(toRow(r))...)
		} else {
			err = database.Conn(ctx, s.db).Create(toRow(r)).Error
		}
		if err != nil {
			return changes.Change{}, fmt.Errorf("create risk: %w", err)
		}
		return change(changes.RiskCreated, nil, r), nil
	})
}

// CreateMany inserts rs and records risk.created for each, in one unit of work:
// the risks in multi-row INSERTs (database.InsertRows), their records together
// (changes.Point.WriteAll), so an import of thousands of risks sends a few
// statements per thousand rather than a few per risk.
func (s *Store) CreateMany(ctx context.Context, rs []*risks.Risk) error {
	if len(rs) == 0 {
		return nil
	}
	return s.point.WriteAll(ctx, func(ctx context.Context) ([]changes.Change, error) {
		rows := make([][]any, len(rs))
		cs := make([]changes.Change, len(rs))
		for i, r := range rs {
			rows[i] = values(toRow(r))
			cs[i] = change(changes.RiskCreated, nil, r)
		}
		if err := database.InsertRows(ctx, s.db, "risks", columns, rows); err != nil {
			return nil, fmt.Errorf("create risks: %w", err)
		}
		return cs, nil
	})
}

// GetByExternalIDs returns the tenant's risks whose external ID is one of
// externalIDs, by external ID (absent ones are missing from the map), reading a
// thousand IDs per statement through the (tenant, external ID) index.
func (s *Store) GetByExternalIDs(ctx context.Context, tenantID string, externalIDs []string) (map[string]*risks.Risk, error) {
	out := make(map[string]*risks.Risk)
	per := database.BatchParams(s.db) - 1 // and the tenant's
	for start := 0; start < len(externalIDs); start += per {
		var ws []row
		chunk := externalIDs[start:min(start+per, len(externalIDs))]
		if err := s.tenant(ctx, tenantID).Where("external_id IN ?", chunk).Find(&ws).Error; err != nil {
			return nil, fmt.Errorf("get risks by external id: %w", err)
		}
		for i := range ws {
			r := toRisk(&ws[i])
			out[*r.ExternalID] = r
		}
	}
	return out, nil
}

// tenant is a statement on the tenant's risks only, in ctx's unit of work, but
// those of a pending import (database.Published: a filter only while the tenant
// may have one, so every other tenant's statement keeps its plan).
func (s *Store) tenant(ctx context.Context, tenantID string) *gorm.DB {
	return database.Conn(ctx, s.db).Scopes(database.OfTenant(tenantID), database.Published(tenantID, "risks.import_id"))
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

// Update stores every field of after over before and records risk.updated. It
// writes only over before's version: risks.ErrVersionChanged when the stored
// version is another, risks.ErrNotFound when there is no such risk.
func (s *Store) Update(ctx context.Context, before, after *risks.Risk) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		res := s.tenant(ctx, before.TenantID).Model(&row{}).
			Where("id = ? AND version = ?", before.ID, before.Version).
			Select(updatedColumns).
			Updates(toRow(after))
		if res.Error != nil {
			return changes.Change{}, fmt.Errorf("update risk %s: %w", after.ID, res.Error)
		}
		if res.RowsAffected == 0 {
			return changes.Change{}, s.missed(ctx, before)
		}
		return change(changes.RiskUpdated, before, after), nil
	})
}

// Delete removes r and records risk.deleted with r as it was. Like Update it
// deletes only r's version: risks.ErrVersionChanged, risks.ErrNotFound.
func (s *Store) Delete(ctx context.Context, r *risks.Risk) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		res := s.tenant(ctx, r.TenantID).Where("id = ? AND version = ?", r.ID, r.Version).
			Delete(&row{})
		if res.Error != nil {
			return changes.Change{}, fmt.Errorf("delete risk %s: %w", r.ID, res.Error)
		}
		if res.RowsAffected == 0 {
			return changes.Change{}, s.missed(ctx, r)
		}
		return change(changes.RiskDeleted, r, nil), nil
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
