// Package followupview is the public shape of reviews, actions and acceptances: the
// JSON responses, events and audit entries show (docs/openapi.yaml).
package followupview

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/etag"
	"github.com/riskapi/riskapi/internal/followup"
	"github.com/riskapi/riskapi/internal/ids"
)

// Actor is who did something: a user (email set) or an API key.
type Actor struct {
	Type  string  `json:"type"`
	ID    string  `json:"id"`
	Email *string `json:"email"`
}

func actorOf(a changes.Actor) Actor {
	out := Actor{Type: string(a.Type), ID: a.ID}
	if a.Email != "" {
		e := a.Email
		out.Email = &e
	}
	return out
}

// Review is a review as the API shows it.
type Review struct {
	ID             string    `json:"id"`
	RiskID         string    `json:"riskId"`
	Note           string    `json:"note"`
	Outcome        string    `json:"outcome"`
	Reviewer       Actor     `json:"reviewer"`
	NextReviewDate *string   `json:"nextReviewDate"`
	CreatedAt      time.Time `json:"createdAt"`
	// Livemode is false for an object of the tenant's sandbox (docs/sandboxes.md).
	Livemode bool `json:"livemode"`
}

// Resource implements changes.View.
func (Review) Resource() string { return "review" }

// OfReview returns r as the API shows it.
func OfReview(r *followup.Review) Review {
	return Review{ID: r.ID, RiskID: r.RiskID, Note: r.Note, Outcome: string(r.Outcome),
		Reviewer: actorOf(r.Reviewer), NextReviewDate: r.NextReviewDate, CreatedAt: r.CreatedAt.UTC(),
		Livemode: ids.Livemode(r.TenantID)}
}

// Action is a treatment action as the API shows it.
type Action struct {
	ID      string `json:"id"`
	RiskID  string `json:"riskId"`
	Title   string `json:"title"`
	OwnerID string `json:"ownerId"`
	// OwnerEmail is the owner's email when the action was given to them.
	OwnerEmail string    `json:"ownerEmail"`
	DueDate    *string   `json:"dueDate"`
	Status     string    `json:"status"`
	Version    int64     `json:"version"`
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"`
	// Livemode is false for an object of the tenant's sandbox (docs/sandboxes.md).
	Livemode bool `json:"livemode"`
}

// Resource implements changes.View.
func (Action) Resource() string { return "action" }

// OfAction returns a as the API shows it.
func OfAction(a *followup.Action) Action {
	return Action{ID: a.ID, RiskID: a.RiskID, Title: a.Title, OwnerID: a.OwnerID, OwnerEmail: a.OwnerEmail, DueDate: a.DueDate,
		Status: string(a.Status), Version: a.Version, CreatedAt: a.CreatedAt.UTC(), UpdatedAt: a.UpdatedAt.UTC(),
		Livemode: ids.Livemode(a.TenantID)}
}

// ActionETag is the entity tag of a's responses: its version, quoted.
func ActionETag(a *followup.Action) string { return etag.Strong(strconv.FormatInt(a.Version, 10)) }

// Acceptance is an acceptance as the API shows it.
type Acceptance struct {
	ID            string          `json:"id"`
	RiskID        string          `json:"riskId"`
	Justification string          `json:"justification"`
	ValidUntil    string          `json:"validUntil"`
	Status        string          `json:"status"`
	RequestedBy   Actor           `json:"requestedBy"`
	DecidedBy     *Actor          `json:"decidedBy"`
	DecisionNote  *string         `json:"decisionNote"`
	DecidedAt     *time.Time      `json:"decidedAt"`
	RiskSnapshot  json.RawMessage `json:"riskSnapshot"` // the risk at the decision, or null
	Version       int64           `json:"version"`
	CreatedAt     time.Time       `json:"createdAt"`
	UpdatedAt     time.Time       `json:"updatedAt"`
	// Livemode is false for an object of the tenant's sandbox (docs/sandboxes.md).
	Livemode bool `json:"livemode"`
}

// Resource implements changes.View.
func (Acceptance) Resource() string { return "acceptance" }

// OfAcceptance returns a as the API shows it.
func OfAcceptance(a *followup.Acceptance) Acceptance {
	out := Acceptance{ID: a.ID, RiskID: a.RiskID, Justification: a.Justification, ValidUntil: a.ValidUntil,
		Status: string(a.Status), RequestedBy: actorOf(a.RequestedBy), DecisionNote: a.DecisionNote,
		RiskSnapshot: a.RiskSnapshot, Version: a.Version, CreatedAt: a.CreatedAt.UTC(), UpdatedAt: a.UpdatedAt.UTC(),
		Livemode: ids.Livemode(a.TenantID)}
	if out.RiskSnapshot == nil {
		out.RiskSnapshot = json.RawMessage("null")
	}
	if a.DecidedBy != nil {
		d := actorOf(*a.DecidedBy)
		out.DecidedBy = &d
	}
	if a.DecidedAt != nil {
		t := a.DecidedAt.UTC()
		out.DecidedAt = &t
	}
	return out
}

// AcceptanceETag is the entity tag of a's responses: its version, quoted.
func AcceptanceETag(a *followup.Acceptance) string {
	return etag.Strong(strconv.FormatInt(a.Version, 10))
}

// MyWork is GET /v1/my-work's answer (docs/openapi.yaml, MyWork).
type MyWork struct {
	ReviewDueDays int              `json:"reviewDueDays"`
	Reviews       List[DueReview]  `json:"reviews"`
	Actions       List[Action]     `json:"actions"`
	Acceptances   List[Acceptance] `json:"acceptances"`
}

// List is one of MyWork's lists: at most its limit, and whether there were more.
type List[T any] struct {
	Data    []T  `json:"data"`
	HasMore bool `json:"hasMore"`
}

// DueReview is a review due on a risk the user owns: state "overdue" once its
// reviewDate has passed (before today, UTC), else "due".
type DueReview struct {
	RiskID      string  `json:"riskId"`
	Title       string  `json:"title"`
	ReviewDate  string  `json:"reviewDate"`
	ReviewEvery *string `json:"reviewEvery"`
	State       string  `json:"state"`
}

// OfMyWork returns w as the API shows it; today is YYYY-MM-DD, UTC.
func OfMyWork(w *followup.MyWork, reviewDueDays int, today string) MyWork {
	out := MyWork{ReviewDueDays: reviewDueDays,
		Reviews:     List[DueReview]{Data: []DueReview{}, HasMore: w.MoreReviews},
		Actions:     List[Action]{Data: []Action{}, HasMore: w.MoreActions},
		Acceptances: List[Acceptance]{Data: []Acceptance{}, HasMore: w.MoreAcceptances}}
	for _, r := range w.Reviews {
		state := "due"
		if r.ReviewDate < today {
			state = "overdue"
		}
		out.Reviews.Data = append(out.Reviews.Data, DueReview{RiskID: r.RiskID, Title: r.Title, ReviewDate: r.ReviewDate,
			ReviewEvery: r.ReviewEvery, State: state})
	}
	for _, a := range w.Actions {
		out.Actions.Data = append(out.Actions.Data, OfAction(a))
	}
	for _, a := range w.Acceptances {
		out.Acceptances.Data = append(out.Acceptances.Data, OfAcceptance(a))
	}
	return out
}
