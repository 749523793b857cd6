// Package followup is what happens to a risk after it is written down
// (docs/register.md, "The register in time"): its reviews on a cadence, its
// treatment actions with an owner and a due date, and its acceptances, requested by
// one person and approved or rejected by another admin, until they expire. It knows
// nothing of HTTP or SQL.
package followup

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/risks"
)

// Outcome is what a review found.
type Outcome string

// The outcomes of a review.
const (
	Unchanged Outcome = "unchanged"
	Changed   Outcome = "changed"
)

// Review is one review of a risk.
type Review struct {
	ID       string
	TenantID string
	RiskID   string
	Note     string // up to 10,000 characters
	Outcome  Outcome
	// Reviewer is who recorded it (a user, or an API key).
	Reviewer changes.Actor
	// NextReviewDate is the reviewDate the review gave the risk: its day plus the
	// risk's reviewEvery, nil when the risk has no cadence.
	NextReviewDate *string
	CreatedAt      time.Time
}

// ActionStatus is where a treatment action stands.
type ActionStatus string

// The statuses of an action.
const (
	ActionOpen      ActionStatus = "open"
	ActionDone      ActionStatus = "done"
	ActionCancelled ActionStatus = "cancelled"
)

// Valid reports whether s is one of the three statuses.
func (s ActionStatus) Valid() bool { return s == ActionOpen || s == ActionDone || s == ActionCancelled }

// Action is one treatment task of a risk.
type Action struct {
	ID       string
	TenantID string
	RiskID   string
	Title    string // 1–200 characters
	OwnerID  string // a user of the tenant
	// OwnerEmail is OwnerID's email when the action was given to them, kept when the
	// user is deleted: whoever reads the action sees who owns it, a member too (who
	// may not list users), as a risk's owner shows its user's email.
	OwnerEmail string
	DueDate    *string
	Status     ActionStatus
	// Version is 1 at creation and one more for each change (the ETag).
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// AcceptanceStatus is where an acceptance stands.
type AcceptanceStatus string

// The statuses of an acceptance: pending until an admin decides; approved until
// validUntil has passed, then expired.
const (
	AcceptancePending  AcceptanceStatus = "pending"
	AcceptanceApproved AcceptanceStatus = "approved"
	AcceptanceRejected AcceptanceStatus = "rejected"
	AcceptanceExpired  AcceptanceStatus = "expired"
)

// Acceptance is a request to accept a risk for a while, and its decision.
type Acceptance struct {
	ID            string
	TenantID      string
	RiskID        string
	Justification string // 1–10,000 characters
	// ValidUntil is the last day the acceptance holds, at most a year after it was
	// requested.
	ValidUntil  string
	Status      AcceptanceStatus
	RequestedBy changes.Actor
	// DecidedBy, DecisionNote, DecidedAt: set by the approval or rejection.
	DecidedBy    *changes.Actor
	DecisionNote *string
	DecidedAt    *time.Time
	// RiskSnapshot is the risk as it was at the decision (its public JSON).
	RiskSnapshot json.RawMessage
	Version      int64
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Errors of followup.
var (
	// ErrActionNotFound: no action with that ID in that tenant.
	ErrActionNotFound = errors.New("action not found")
	// ErrAcceptanceNotFound: no acceptance with that ID in that tenant.
	ErrAcceptanceNotFound = errors.New("acceptance not found")
)

// StaleActionError refuses a write whose If-Match does not name the action's
// version: Current is the action as stored now.
type StaleActionError struct{ Current *Action }

func (e *StaleActionError) Error() string {
	return "action " + e.Current.ID + " changed since it was read"
}

// ActionFilter selects a page of a tenant's actions, oldest first.
type ActionFilter struct {
	RiskID    string       // only this risk's, if set
	OwnerID   string       // only this owner's, if set
	Status    ActionStatus // only this status, if set
	DueBefore string       // only those due before this date, if set
	After     string       // the cursor: the last action of the previous page
	Limit     int
}

// AcceptanceFilter selects a page of a tenant's acceptances, newest first.
type AcceptanceFilter struct {
	RiskID string           // only this risk's, if set
	Status AcceptanceStatus // only this status, if set
	Before string           // the cursor
	Limit  int
}

// Store persists reviews, actions and acceptances. Every write records its change
// (internal/changes) in the unit of work its context carries, or its own.
type Store interface {
	// CreateReview inserts r and records review.created.
	CreateReview(ctx context.Context, r *Review) error
	// Reviews lists the risk's reviews newest first, before the cursor.
	Reviews(ctx context.Context, tenantID, riskID, before string, limit int) ([]*Review, bool, error)
	// CreateAction inserts a and records action.created. Errors: risks.ErrNotFound
	// when its risk is not the tenant's.
	CreateAction(ctx context.Context, a *Action) error
	// ActionForUpdate returns the tenant's action, locked until ctx's transaction
	// ends. Errors: ErrActionNotFound.
	ActionForUpdate(ctx context.Context, tenantID, id string) (*Action, error)
	// Action returns the tenant's action. Errors: ErrActionNotFound.
	Action(ctx context.Context, tenantID, id string) (*Action, error)
	// UpdateAction stores after over before and records action.updated.
	UpdateAction(ctx context.Context, before, after *Action) error
	// Actions lists the actions f selects.
	Actions(ctx context.Context, tenantID string, f ActionFilter) ([]*Action, bool, error)
	// CreateAcceptance inserts a and records acceptance.created. Errors:
	// risks.ErrNotFound when its risk is not the tenant's.
	CreateAcceptance(ctx context.Context, a *Acceptance) error
	// AcceptanceForUpdate returns the tenant's acceptance, locked until ctx's
	// transaction ends. Errors: ErrAcceptanceNotFound.
	AcceptanceForUpdate(ctx context.Context, tenantID, id string) (*Acceptance, error)
	// Acceptance returns the tenant's acceptance. Errors: ErrAcceptanceNotFound.
	Acceptance(ctx context.Context, tenantID, id string) (*Acceptance, error)
	// UpdateAcceptance stores after over before and records action.
	UpdateAcceptance(ctx context.Context, action changes.Action, before, after *Acceptance) error
	// Expire is UpdateAcceptance of an expiry (acceptance.expired), whose event
	// takes eventID, the due-date notice's derived ID.
	Expire(ctx context.Context, eventID string, before, after *Acceptance) error
	// Acceptances lists the acceptances f selects.
	Acceptances(ctx context.Context, tenantID string, f AcceptanceFilter) ([]*Acceptance, bool, error)
	// MyWork returns what q's user has to do in the tenant's data.
	MyWork(ctx context.Context, tenantID string, q MyWorkQuery) (*MyWork, error)
}

// MyWorkQuery selects a user's My work (docs/register.md, My work).
type MyWorkQuery struct {
	UserID string
	// Admin: the user decides acceptances, so those others requested are theirs.
	Admin bool
	// ReviewBy is the last reviewDate (YYYY-MM-DD) that makes a review due: today
	// plus REVIEW_DUE_DAYS.
	ReviewBy string
	// Limit bounds each list; each reports whether it had more.
	Limit int
}

// DueReview is a review due (or overdue) on a risk the user owns.
type DueReview struct {
	RiskID      string
	Title       string
	ReviewDate  string
	ReviewEvery *string
}

// MyWork is a user's due reviews (earliest first), open actions (earliest due
// first, undated last) and acceptances awaiting their decision (oldest first).
type MyWork struct {
	Reviews                                   []DueReview
	Actions                                   []*Action
	Acceptances                               []*Acceptance
	MoreReviews, MoreActions, MoreAcceptances bool
}

// Users finds the users that own actions (internal/tenants.Service).
type Users interface {
	// ActionOwner returns the email of id when it is a user who may own the
	// tenant's actions; ok false when it is not.
	ActionOwner(ctx context.Context, tenantID, id string) (email string, ok bool, err error)
}

// Risks is what followup changes of a risk (risks.Service).
type Risks interface {
	Update(ctx context.Context, tenantID, id string, ifMatch risks.IfMatch, change func(*risks.Risk) error) (*risks.Risk, error)
}

// RiskReader reads a tenant's risk (risks.Store).
type RiskReader interface {
	// Get returns the tenant's risk with id, or risks.ErrNotFound.
	Get(ctx context.Context, tenantID, id string) (*risks.Risk, error)
}
