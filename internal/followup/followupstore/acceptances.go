package followupstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/followup"
	"github.com/riskapi/riskapi/internal/followup/followupview"
)

type acceptanceRow struct {
	ID               string
	TenantID         string
	RiskID           string
	Justification    string
	ValidUntil       string
	Status           string
	RequestedByType  string
	RequestedBy      string
	RequestedByEmail string
	DecidedBy        *string
	DecidedByEmail   *string
	DecisionNote     *string
	DecidedAt        *time.Time
	RiskSnapshot     *string
	Version          int64
	CreatedAt        time.Time `gorm:"autoCreateTime:false"`
	UpdatedAt        time.Time `gorm:"autoUpdateTime:false"`
}

func (acceptanceRow) TableName() string { return "acceptances" }

// decidedByType is the actor type of every decider: only session users decide
// (docs/register.md).
const decidedByType = changes.ActorUser

func toAcceptanceRow(a *followup.Acceptance) *acceptanceRow {
	w := &acceptanceRow{ID: a.ID, TenantID: a.TenantID, RiskID: a.RiskID, Justification: a.Justification,
		ValidUntil: a.ValidUntil, Status: string(a.Status), RequestedByType: string(a.RequestedBy.Type),
		RequestedBy: a.RequestedBy.ID, RequestedByEmail: a.RequestedBy.Email, DecisionNote: a.DecisionNote,
		Version: a.Version, CreatedAt: a.CreatedAt.UTC(), UpdatedAt: a.UpdatedAt.UTC()}
	if a.DecidedBy != nil {
		id, email := a.DecidedBy.ID, a.DecidedBy.Email
		w.DecidedBy, w.DecidedByEmail = &id, &email
	}
	if a.DecidedAt != nil {
		t := a.DecidedAt.UTC()
		w.DecidedAt = &t
	}
	if a.RiskSnapshot != nil {
		s := string(a.RiskSnapshot)
		w.RiskSnapshot = &s
	}
	return w
}

func toAcceptance(w *acceptanceRow) *followup.Acceptance {
	a := &followup.Acceptance{ID: w.ID, TenantID: w.TenantID, RiskID: w.RiskID, Justification: w.Justification,
		ValidUntil: w.ValidUntil, Status: followup.AcceptanceStatus(w.Status), DecisionNote: w.DecisionNote,
		RequestedBy: changes.Actor{Type: changes.ActorType(w.RequestedByType), ID: w.RequestedBy, Email: w.RequestedByEmail},
		Version:     w.Version, CreatedAt: w.CreatedAt.UTC(), UpdatedAt: w.UpdatedAt.UTC()}
	if w.DecidedBy != nil {
		a.DecidedBy = &changes.Actor{Type: decidedByType, ID: *w.DecidedBy}
		if w.DecidedByEmail != nil {
			a.DecidedBy.Email = *w.DecidedByEmail
		}
	}
	if w.DecidedAt != nil {
		t := w.DecidedAt.UTC()
		a.DecidedAt = &t
	}
	if w.RiskSnapshot != nil {
		a.RiskSnapshot = []byte(*w.RiskSnapshot)
	}
	return a
}

// CreateAcceptance inserts a if its risk is the tenant's and records
// acceptance.created.
func (s *Store) CreateAcceptance(ctx context.Context, a *followup.Acceptance) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		if err := s.lockRisk(ctx, a.TenantID, a.RiskID); err != nil {
			return changes.Change{}, err
		}
		if err := database.Conn(ctx, s.db).Create(toAcceptanceRow(a)).Error; err != nil {
			return changes.Change{}, fmt.Errorf("create acceptance: %w", err)
		}
		return changes.Change{TenantID: a.TenantID, Action: changes.AcceptanceCreated,
			Target: changes.Target{ID: a.ID}, After: followupview.OfAcceptance(a)}, nil
	})
}

// AcceptanceForUpdate reads the tenant's acceptance locked. Errors:
// followup.ErrAcceptanceNotFound.
func (s *Store) AcceptanceForUpdate(ctx context.Context, tenantID, id string) (*followup.Acceptance, error) {
	return s.acceptance(s.forUpdate(s.tenant(ctx, tenantID)), id)
}

// Acceptance reads the tenant's acceptance. Errors: followup.ErrAcceptanceNotFound.
func (s *Store) Acceptance(ctx context.Context, tenantID, id string) (*followup.Acceptance, error) {
	return s.acceptance(s.tenant(ctx, tenantID), id)
}

func (s *Store) acceptance(q *gorm.DB, id string) (*followup.Acceptance, error) {
	var w acceptanceRow
	err := q.Where("id = ?", id).Take(&w).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, followup.ErrAcceptanceNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get acceptance: %w", err)
	}
	return toAcceptance(&w), nil
}

// UpdateAcceptance stores after over before's version and records action (its
// decision or expiry), with eventID as its event's ID when not "" (a due notice's).
func (s *Store) UpdateAcceptance(ctx context.Context, action changes.Action, before, after *followup.Acceptance) error {
	return s.updateAcceptance(ctx, action, "", before, after)
}

// Expire is UpdateAcceptance of an expiry, whose acceptance.expired event takes
// eventID (the due notice's derived ID).
func (s *Store) Expire(ctx context.Context, eventID string, before, after *followup.Acceptance) error {
	return s.updateAcceptance(ctx, changes.AcceptanceExpired, eventID, before, after)
}

func (s *Store) updateAcceptance(ctx context.Context, action changes.Action, eventID string, before, after *followup.Acceptance) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		w := toAcceptanceRow(after)
		res := s.tenant(ctx, before.TenantID).Model(&acceptanceRow{}).Where("id = ? AND version = ?", before.ID, before.Version).
			Updates(map[string]any{"status": w.Status, "decided_by": w.DecidedBy, "decided_by_email": w.DecidedByEmail,
				"decision_note": w.DecisionNote, "decided_at": w.DecidedAt, "risk_snapshot": w.RiskSnapshot,
				"version": w.Version, "updated_at": w.UpdatedAt})
		if res.Error != nil {
			return changes.Change{}, fmt.Errorf("update acceptance: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return changes.Change{}, followup.ErrAcceptanceNotFound
		}
		return changes.Change{TenantID: after.TenantID, Action: action, Target: changes.Target{ID: after.ID},
			Before: followupview.OfAcceptance(before), After: followupview.OfAcceptance(after), EventID: eventID}, nil
	})
}

// Acceptances lists the acceptances f selects, newest first.
func (s *Store) Acceptances(ctx context.Context, tenantID string, f followup.AcceptanceFilter) ([]*followup.Acceptance, bool, error) {
	q := s.tenant(ctx, tenantID)
	if f.RiskID != "" {
		q = q.Where("risk_id = ?", f.RiskID)
	}
	if f.Status != "" {
		q = q.Where("status = ?", string(f.Status))
	}
	out, more, err := database.Page(q, database.NewestFirst, f.Before, f.Limit, toAcceptance)
	if err != nil {
		return nil, false, fmt.Errorf("list acceptances: %w", err)
	}
	return out, more, nil
}
