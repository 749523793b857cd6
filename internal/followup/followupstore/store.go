// Package followupstore stores reviews, actions and acceptances with GORM on SQLite
// or PostgreSQL. Its row types stay here.
package followupstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/followup"
	"github.com/riskapi/riskapi/internal/followup/followupview"
	"github.com/riskapi/riskapi/internal/risks"
)

// Store implements followup.Store; each write records its change through its
// changes.Point, in the write's unit of work.
type Store struct {
	db      *gorm.DB
	dialect database.Dialect
	point   changes.Point
}

var _ followup.Store = (*Store)(nil)

// New returns a Store over db whose writes record through rec (required).
func New(db *database.DB, rec changes.Recorder) *Store {
	return &Store{db: db.DB, dialect: db.Dialect, point: changes.Point{Tx: database.NewRunner(db.DB), Recorder: rec}}
}

// InTx runs fn in the transaction ctx carries, or a new one.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	return database.RunInTx(ctx, s.db, fn)
}

func (s *Store) tenant(ctx context.Context, tenantID string) *gorm.DB {
	return database.Conn(ctx, s.db).Scopes(database.OfTenant(tenantID))
}

// lockRisk checks that riskID is the tenant's, locking its row FOR KEY SHARE on
// PostgreSQL (the lock a foreign key would take) so a concurrent deletion of the
// risk waits and then removes what was added to it. Errors: risks.ErrNotFound.
func (s *Store) lockRisk(ctx context.Context, tenantID, riskID string) error {
	q := s.tenant(ctx, tenantID).Table("risks").Scopes(database.Published(tenantID, "import_id")).Where("id = ?", riskID)
	if s.dialect == database.Postgres {
		q = q.Clauses(clause.Locking{Strength: "KEY SHARE"})
	}
	var found []string
	if err := q.Pluck("id", &found).Error; err != nil {
		return fmt.Errorf("find risk: %w", err)
	}
	if len(found) == 0 {
		return risks.ErrNotFound
	}
	return nil
}

// forUpdate locks the row q reads until the transaction ends (PostgreSQL; a SQLite
// transaction holds the only write lock already).
func (s *Store) forUpdate(q *gorm.DB) *gorm.DB {
	if s.dialect == database.Postgres {
		return q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	return q
}

type reviewRow struct {
	ID             string
	TenantID       string
	RiskID         string
	Note           string
	Outcome        string
	ReviewerType   string
	ReviewerID     string
	ReviewerEmail  string
	NextReviewDate *string
	CreatedAt      time.Time `gorm:"autoCreateTime:false"`
}

func (reviewRow) TableName() string { return "risk_reviews" }

func toReview(w *reviewRow) *followup.Review {
	return &followup.Review{ID: w.ID, TenantID: w.TenantID, RiskID: w.RiskID, Note: w.Note,
		Outcome: followup.Outcome(w.Outcome), NextReviewDate: w.NextReviewDate, CreatedAt: w.CreatedAt.UTC(),
		Reviewer: changes.Actor{Type: changes.ActorType(w.ReviewerType), ID: w.ReviewerID, Email: w.ReviewerEmail}}
}

// CreateReview inserts r and records review.created.
func (s *Store) CreateReview(ctx context.Context, r *followup.Review) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		w := &reviewRow{ID: r.ID, TenantID: r.TenantID, RiskID: r.RiskID, Note: r.Note, Outcome: string(r.Outcome),
			ReviewerType: string(r.Reviewer.Type), ReviewerID: r.Reviewer.ID, ReviewerEmail: r.Reviewer.Email,
			NextReviewDate: r.NextReviewDate, CreatedAt: r.CreatedAt.UTC()}
		if err := database.Conn(ctx, s.db).Create(w).Error; err != nil {
			return changes.Change{}, fmt.Errorf("create review: %w", err)
		}
		return changes.Change{TenantID: r.TenantID, Action: changes.ReviewCreated,
			Target: changes.Target{ID: r.ID}, After: followupview.OfReview(r)}, nil
	})
}

// Reviews lists the risk's reviews newest first (IDs are UUIDv7).
func (s *Store) Reviews(ctx context.Context, tenantID, riskID, before string, limit int) ([]*followup.Review, bool, error) {
	q := s.tenant(ctx, tenantID).Where("risk_id = ?", riskID)
	out, more, err := database.Page(q, database.NewestFirst, before, limit, toReview)
	if err != nil {
		return nil, false, fmt.Errorf("list reviews: %w", err)
	}
	return out, more, nil
}

type actionRow struct {
	ID        string
	TenantID  string
	RiskID    string
	Title     string
	OwnerID   string
	Owner     string // the owner's email when assigned (migration 0033)
	DueDate   *string
	Status    string
	Version   int64
	CreatedAt time.Time `gorm:"autoCreateTime:false"`
	UpdatedAt time.Time `gorm:"autoUpdateTime:false"`
}

func (actionRow) TableName() string { return "risk_actions" }

func toActionRow(a *followup.Action) *actionRow {
	return &actionRow{ID: a.ID, TenantID: a.TenantID, RiskID: a.RiskID, Title: a.Title, OwnerID: a.OwnerID,
		Owner: a.OwnerEmail, DueDate: a.DueDate, Status: string(a.Status), Version: a.Version, CreatedAt: a.CreatedAt.UTC(), UpdatedAt: a.UpdatedAt.UTC()}
}

func toAction(w *actionRow) *followup.Action {
	return &followup.Action{ID: w.ID, TenantID: w.TenantID, RiskID: w.RiskID, Title: w.Title, OwnerID: w.OwnerID,
		OwnerEmail: w.Owner, DueDate: w.DueDate, Status: followup.ActionStatus(w.Status), Version: w.Version,
		CreatedAt: w.CreatedAt.UTC(), UpdatedAt: w.UpdatedAt.UTC()}
}

// CreateAction inserts a if its risk is the tenant's and records action.created.
func (s *Store) CreateAction(ctx context.Context, a *followup.Action) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		if err := s.lockRisk(ctx, a.TenantID, a.RiskID); err != nil {
			return changes.Change{}, err
		}
		if err := database.Conn(ctx, s.db).Create(toActionRow(a)).Error; err != nil {
			return changes.Change{}, fmt.Errorf("create action: %w", err)
		}
		return changes.Change{TenantID: a.TenantID, Action: changes.ActionCreated,
			Target: changes.Target{ID: a.ID}, After: followupview.OfAction(a)}, nil
	})
}

// ActionForUpdate reads the tenant's action locked. Errors: followup.ErrActionNotFound.
func (s *Store) ActionForUpdate(ctx context.Context, tenantID, id string) (*followup.Action, error) {
	return s.action(s.forUpdate(s.tenant(ctx, tenantID)), id)
}

// Action reads the tenant's action. Errors: followup.ErrActionNotFound.
func (s *Store) Action(ctx context.Context, tenantID, id string) (*followup.Action, error) {
	return s.action(s.tenant(ctx, tenantID), id)
}

func (s *Store) action(q *gorm.DB, id string) (*followup.Action, error) {
	var w actionRow
	err := q.Where("id = ?", id).Take(&w).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, followup.ErrActionNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get action: %w", err)
	}
	return toAction(&w), nil
}

// UpdateAction stores after over before's version and records action.updated.
func (s *Store) UpdateAction(ctx context.Context, before, after *followup.Action) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		res := s.tenant(ctx, before.TenantID).Model(&actionRow{}).Where("id = ? AND version = ?", before.ID, before.Version).
			Updates(map[string]any{"title": after.Title, "owner_id": after.OwnerID, "owner": after.OwnerEmail, "due_date": after.DueDate,
				"status": string(after.Status), "version": after.Version, "updated_at": after.UpdatedAt.UTC()})
		if res.Error != nil {
			return changes.Change{}, fmt.Errorf("update action: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return changes.Change{}, followup.ErrActionNotFound
		}
		return changes.Change{TenantID: after.TenantID, Action: changes.ActionUpdated, Target: changes.Target{ID: after.ID},
			Before: followupview.OfAction(before), After: followupview.OfAction(after)}, nil
	})
}

// Actions lists the actions f selects, oldest first.
func (s *Store) Actions(ctx context.Context, tenantID string, f followup.ActionFilter) ([]*followup.Action, bool, error) {
	q := s.tenant(ctx, tenantID)
	if f.RiskID != "" {
		q = q.Where("risk_id = ?", f.RiskID)
	}
	if f.OwnerID != "" {
		q = q.Where("owner_id = ?", f.OwnerID)
	}
	if f.Status != "" {
		q = q.Where("status = ?", string(f.Status))
	}
	if f.DueBefore != "" {
		q = q.Where("due_date < ?", f.DueBefore)
	}
	out, more, err := database.Page(q, database.OldestFirst, f.After, f.Limit, toAction)
	if err != nil {
		return nil, false, fmt.Errorf("list actions: %w", err)
	}
	return out, more, nil
}

// DeleteByRisk removes the tenant's reviews, actions and acceptances of riskID, with
// the risk (risks.Dependent), and returns how many rows it removed.
func (s *Store) DeleteByRisk(ctx context.Context, tenantID, riskID string) (int, error) {
	n := 0
	for _, table := range []string{"risk_reviews", "risk_actions", "acceptances"} {
		res := s.tenant(ctx, tenantID).Table(table).Where("risk_id = ?", riskID).Delete(nil)
		if res.Error != nil {
			return n, fmt.Errorf("delete %s of risk: %w", table, res.Error)
		}
		n += int(res.RowsAffected)
	}
	return n, nil
}

// dueReviewRow is the part of a risk's row My work shows.
type dueReviewRow struct {
	ID          string
	Title       string
	ReviewDate  string
	ReviewEvery *string
}

// MyWork implements followup.Store: three bounded reads (the first page of each
// list), each served by an index on (tenant, user): risks_tenant_owner_user,
// idx_risk_actions_owner, idx_acceptances_status.
func (s *Store) MyWork(ctx context.Context, tenantID string, q followup.MyWorkQuery) (*followup.MyWork, error) {
	out := &followup.MyWork{}
	var err error
	reviews := s.tenant(ctx, tenantID).Table("risks").Scopes(database.Published(tenantID, "import_id")).Select("id, title, review_date, review_every").
		Where("owner_user_id = ? AND status <> 'closed' AND review_date IS NOT NULL AND review_date <= ?", q.UserID, q.ReviewBy)
	out.Reviews, out.MoreReviews, err = database.PageSorted(reviews, database.Sorted{Column: "review_date"}, nil, q.Limit,
		func(r *dueReviewRow) followup.DueReview {
			return followup.DueReview{RiskID: r.ID, Title: r.Title, ReviewDate: r.ReviewDate, ReviewEvery: r.ReviewEvery}
		})
	if err != nil {
		return nil, fmt.Errorf("my work: reviews: %w", err)
	}
	actions := s.tenant(ctx, tenantID).Model(&actionRow{}).Where("owner_id = ? AND status = ?", q.UserID, string(followup.ActionOpen))
	out.Actions, out.MoreActions, err = database.PageSorted(actions, database.Sorted{Column: "due_date", Nullable: true}, nil, q.Limit, toAction)
	if err != nil {
		return nil, fmt.Errorf("my work: actions: %w", err)
	}
	if q.Admin {
		pending := s.tenant(ctx, tenantID).Model(&acceptanceRow{}).
			Where("status = ? AND requested_by <> ?", string(followup.AcceptancePending), q.UserID)
		out.Acceptances, out.MoreAcceptances, err = database.Page(pending, database.OldestFirst, "", q.Limit, toAcceptance)
		if err != nil {
			return nil, fmt.Errorf("my work: acceptances: %w", err)
		}
	}
	return out, nil
}
