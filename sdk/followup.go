package riskapi

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// The register in time (docs/register.md): a risk's reviews, treatment actions
// and acceptances. Deciding an acceptance (approve, reject) is an admin's, on
// /v1 only: no API key can, so this SDK cannot either.

// ReviewsService records and lists reviews of risks. Reach it as Client.Reviews.
type ReviewsService service

// ActionsService manages treatment actions. Reach it as Client.Actions.
type ActionsService service

// AcceptancesService requests and lists acceptances of risks. Reach it as
// Client.Acceptances.
type AcceptancesService service

// Actor is who did something: a user (Email set) or an API key.
type Actor struct {
	Type  string  `json:"type"`
	ID    string  `json:"id"`
	Email *string `json:"email"`
}

// Review is one review of a risk.
type Review struct {
	ID      string `json:"id"`
	RiskID  string `json:"riskId"`
	Note    string `json:"note"`
	Outcome string `json:"outcome"` // unchanged or changed
	// Reviewer is who recorded it.
	Reviewer Actor `json:"reviewer"`
	// NextReviewDate is the reviewDate the review gave the risk (its day plus
	// the risk's reviewEvery); nil when the risk has no cadence.
	NextReviewDate *string   `json:"nextReviewDate"`
	CreatedAt      time.Time `json:"createdAt"`

	// Livemode is false for test data: the tenant's sandbox (docs/sandboxes.md).
	Livemode bool `json:"livemode"`

	// LastResponse describes the HTTP exchange that returned this review.
	LastResponse *APIResponse `json:"-"`
}

func (r *Review) setLastResponse(a *APIResponse) { r.LastResponse = a }

// ReviewCreateParams is a review: Outcome "unchanged" or "changed".
type ReviewCreateParams struct {
	Params  `json:"-"`
	Note    string `json:"note,omitempty"`
	Outcome string `json:"outcome"`
}

// Create records a review of the risk riskID and moves its reviewDate to today
// plus its reviewEvery (POST /v2/risks/{id}/reviews). Errors: *Error 404
// NOT_FOUND, 400 VALIDATION_FAILED.
func (s *ReviewsService) Create(ctx context.Context, riskID string, p *ReviewCreateParams) (*Review, error) {
	if riskID == "" {
		return nil, errEmptyID
	}
	if p == nil {
		p = &ReviewCreateParams{}
	}
	out := new(Review)
	info, err := s.client.doJSON(ctx, http.MethodPost, "/v2/risks/"+url.PathEscape(riskID)+"/reviews", nil, &p.Params, p, out)
	if err != nil {
		return nil, err
	}
	out.LastResponse = info
	return out, nil
}

// PageParams are a listing's page size and starting cursor.
type PageParams struct {
	Params
	// Limit is the page size; 0 means the server's default.
	Limit int
	// Cursor starts the listing after an earlier page: a Page.NextCursor.
	Cursor string
}

func (p *PageParams) query() (url.Values, *Params) {
	q := url.Values{}
	if p == nil {
		return q, nil
	}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Cursor != "" {
		q.Set("cursor", p.Cursor)
	}
	return q, &p.Params
}

// List returns the risk's reviews, newest first (GET /v2/risks/{id}/reviews).
func (s *ReviewsService) List(ctx context.Context, riskID string, p *PageParams) iter.Seq2[*Review, error] {
	if p == nil {
		p = &PageParams{}
	}
	return paginate(ctx, p.Cursor, func(ctx context.Context, cursor string) (*Page[Review], error) {
		q, params := (&PageParams{Params: p.Params, Limit: p.Limit, Cursor: cursor}).query()
		return getPage[Review](ctx, s.client, "/v2/risks/"+url.PathEscape(riskID)+"/reviews", q, params)
	})
}

// Action is a treatment task of a risk.
type Action struct {
	ID      string `json:"id"`
	RiskID  string `json:"riskId"`
	Title   string `json:"title"`
	OwnerID string `json:"ownerId"` // a user of the tenant
	// OwnerEmail is the owner's email when the action was given to them.
	OwnerEmail string       `json:"ownerEmail"`
	DueDate    *string      `json:"dueDate"` // YYYY-MM-DD
	Status     ActionStatus `json:"status"`
	// Version is the action's version, also its ETag; send it as
	// Params.IfMatch (ETag()) to change only the version you read.
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`

	// Livemode is false for test data: the tenant's sandbox (docs/sandboxes.md).
	Livemode bool `json:"livemode"`

	// LastResponse describes the HTTP exchange that returned this action.
	LastResponse *APIResponse `json:"-"`
}

func (a *Action) setLastResponse(r *APIResponse) { a.LastResponse = r }

// ETag is the action's version as an entity tag, for Params.IfMatch.
func (a *Action) ETag() string { return `"` + strconv.FormatInt(a.Version, 10) + `"` }

// ActionCreateParams describe a new action.
type ActionCreateParams struct {
	Params  `json:"-"`
	Title   string `json:"title"`
	OwnerID string `json:"ownerId"`
	DueDate string `json:"dueDate,omitempty"`
}

// Create adds an open action to the risk riskID (POST /v2/risks/{id}/actions).
// Errors: 400 VALIDATION_FAILED (an owner who is no user of the tenant names
// ownerId), 404 NOT_FOUND.
func (s *ActionsService) Create(ctx context.Context, riskID string, p *ActionCreateParams) (*Action, error) {
	if riskID == "" {
		return nil, errEmptyID
	}
	if p == nil {
		p = &ActionCreateParams{}
	}
	out := new(Action)
	info, err := s.client.doJSON(ctx, http.MethodPost, "/v2/risks/"+url.PathEscape(riskID)+"/actions", nil, &p.Params, p, out)
	if err != nil {
		return nil, err
	}
	out.LastResponse = info
	return out, nil
}

// Get returns the action id (GET /v2/actions/{id}); its ETag is Action.ETag.
// Errors: *Error 404 NOT_FOUND.
func (s *ActionsService) Get(ctx context.Context, id string) (*Action, error) {
	if id == "" {
		return nil, errEmptyID
	}
	out := new(Action)
	info, err := s.client.doJSON(ctx, http.MethodGet, "/v2/actions/"+url.PathEscape(id), nil, nil, nil, out)
	if err != nil {
		return nil, err
	}
	out.LastResponse = info
	return out, nil
}

// ActionUpdateParams change an action; nil members are kept. Params.IfMatch
// makes the change conditional (412 PRECONDITION_FAILED when stale).
type ActionUpdateParams struct {
	Params  `json:"-"`
	Title   *string       `json:"title,omitempty"`
	OwnerID *string       `json:"ownerId,omitempty"`
	DueDate *string       `json:"dueDate,omitempty"`
	Status  *ActionStatus `json:"status,omitempty"`
}

// Update changes the action id (PATCH /v2/actions/{id}).
func (s *ActionsService) Update(ctx context.Context, id string, p *ActionUpdateParams) (*Action, error) {
	if id == "" {
		return nil, errEmptyID
	}
	if p == nil {
		p = &ActionUpdateParams{}
	}
	out := new(Action)
	info, err := s.client.doJSON(ctx, http.MethodPatch, "/v2/actions/"+url.PathEscape(id), nil, &p.Params, p, out)
	if err != nil {
		return nil, err
	}
	out.LastResponse = info
	return out, nil
}

// ActionListParams filter GET /v2/actions; all given filters must hold.
type ActionListParams struct {
	PageParams
	OwnerID   string
	Status    ActionStatus
	DueBefore string // YYYY-MM-DD
}

// List returns the tenant's actions, oldest first (GET /v2/actions).
func (s *ActionsService) List(ctx context.Context, p *ActionListParams) iter.Seq2[*Action, error] {
	if p == nil {
		p = &ActionListParams{}
	}
	return paginate(ctx, p.Cursor, func(ctx context.Context, cursor string) (*Page[Action], error) {
		q, params := (&PageParams{Params: p.Params, Limit: p.Limit, Cursor: cursor}).query()
		for k, v := range map[string]string{"ownerId": p.OwnerID, "status": string(p.Status), "dueBefore": p.DueBefore} {
			if v != "" {
				q.Set(k, v)
			}
		}
		return getPage[Action](ctx, s.client, "/v2/actions", q, params)
	})
}

// ListForRisk returns the risk's actions, oldest first (GET /v2/risks/{id}/actions).
func (s *ActionsService) ListForRisk(ctx context.Context, riskID string, p *PageParams) iter.Seq2[*Action, error] {
	if p == nil {
		p = &PageParams{}
	}
	return paginate(ctx, p.Cursor, func(ctx context.Context, cursor string) (*Page[Action], error) {
		q, params := (&PageParams{Params: p.Params, Limit: p.Limit, Cursor: cursor}).query()
		return getPage[Action](ctx, s.client, "/v2/risks/"+url.PathEscape(riskID)+"/actions", q, params)
	})
}

// Acceptance is a request to accept a risk for a while, and its decision.
type Acceptance struct {
	ID            string           `json:"id"`
	RiskID        string           `json:"riskId"`
	Justification string           `json:"justification"`
	ValidUntil    string           `json:"validUntil"` // the last day it holds
	Status        AcceptanceStatus `json:"status"`
	RequestedBy   Actor            `json:"requestedBy"`
	DecidedBy     *Actor           `json:"decidedBy"`
	DecisionNote  *string          `json:"decisionNote"`
	DecidedAt     *time.Time       `json:"decidedAt"`
	// RiskSnapshot is the risk as it was when decided; nil while pending.
	RiskSnapshot *Risk     `json:"riskSnapshot"`
	Version      int64     `json:"version"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`

	// Livemode is false for test data: the tenant's sandbox (docs/sandboxes.md).
	Livemode bool `json:"livemode"`

	// LastResponse describes the HTTP exchange that returned this acceptance.
	LastResponse *APIResponse `json:"-"`
}

func (a *Acceptance) setLastResponse(r *APIResponse) { a.LastResponse = r }

// AcceptanceCreateParams request an acceptance: ValidUntil (YYYY-MM-DD) after
// today and at most a year from it.
type AcceptanceCreateParams struct {
	Params        `json:"-"`
	Justification string `json:"justification"`
	ValidUntil    string `json:"validUntil"`
}

// Request creates a pending acceptance of the risk riskID, requested by the
// key (POST /v2/risks/{id}/acceptances).
func (s *AcceptancesService) Request(ctx context.Context, riskID string, p *AcceptanceCreateParams) (*Acceptance, error) {
	if riskID == "" {
		return nil, errEmptyID
	}
	if p == nil {
		p = &AcceptanceCreateParams{}
	}
	out := new(Acceptance)
	info, err := s.client.doJSON(ctx, http.MethodPost, "/v2/risks/"+url.PathEscape(riskID)+"/acceptances", nil, &p.Params, p, out)
	if err != nil {
		return nil, err
	}
	out.LastResponse = info
	return out, nil
}

// Get returns the acceptance id (GET /v2/acceptances/{id}). Errors: *Error 404
// NOT_FOUND.
func (s *AcceptancesService) Get(ctx context.Context, id string) (*Acceptance, error) {
	if id == "" {
		return nil, errEmptyID
	}
	out := new(Acceptance)
	info, err := s.client.doJSON(ctx, http.MethodGet, "/v2/acceptances/"+url.PathEscape(id), nil, nil, nil, out)
	if err != nil {
		return nil, err
	}
	out.LastResponse = info
	return out, nil
}

// AcceptanceListParams filter GET /v2/acceptances.
type AcceptanceListParams struct {
	PageParams
	Status AcceptanceStatus
}

// List returns the tenant's acceptances, newest first (GET /v2/acceptances).
func (s *AcceptancesService) List(ctx context.Context, p *AcceptanceListParams) iter.Seq2[*Acceptance, error] {
	if p == nil {
		p = &AcceptanceListParams{}
	}
	return paginate(ctx, p.Cursor, func(ctx context.Context, cursor string) (*Page[Acceptance], error) {
		q, params := (&PageParams{Params: p.Params, Limit: p.Limit, Cursor: cursor}).query()
		if p.Status != "" {
			q.Set("status", string(p.Status))
		}
		return getPage[Acceptance](ctx, s.client, "/v2/acceptances", q, params)
	})
}

// ListForRisk returns the risk's acceptances, newest first.
func (s *AcceptancesService) ListForRisk(ctx context.Context, riskID string, p *PageParams) iter.Seq2[*Acceptance, error] {
	if p == nil {
		p = &PageParams{}
	}
	return paginate(ctx, p.Cursor, func(ctx context.Context, cursor string) (*Page[Acceptance], error) {
		q, params := (&PageParams{Params: p.Params, Limit: p.Limit, Cursor: cursor}).query()
		return getPage[Acceptance](ctx, s.client, "/v2/risks/"+url.PathEscape(riskID)+"/acceptances", q, params)
	})
}
