package riskapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// RisksService manages risks (/v2/risks). Reach it as Client.Risks.
type RisksService service

// Risk is a risk as the server returns it.
type Risk struct {
	// ID is the server-assigned id, "risk_…".
	ID string `json:"id"`
	// Title is 1–200 characters.
	Title string `json:"title"`
	// Description is free text; empty when not set.
	Description string `json:"description"`
	// Category is a free-form grouping, e.g. "compliance"; empty when not set.
	Category string `json:"category"`
	// Likelihood is 1–5; nil when not set.
	Likelihood *int `json:"likelihood"`
	// Impact is 1–5; nil when not set.
	Impact *int `json:"impact"`
	// RiskScore is 1–25; when not given at creation but Likelihood and
	// Impact are, the server sets it to their product. Nil when not set.
	RiskScore *int `json:"riskScore"`
	// Status is open, mitigated or closed.
	Status RiskStatus `json:"status"`
	// Owner is who is responsible: one of the tenant's users, or a name. The
	// server always sends it; a risk without owner has an empty Name and a nil
	// UserID.
	Owner *RiskOwner `json:"owner"`
	// Treatment is the decision taken: accept, mitigate, transfer or avoid;
	// nil when none.
	Treatment *RiskTreatment `json:"treatment"`
	// ReviewDate is when the risk is next reviewed, YYYY-MM-DD; nil when none.
	ReviewDate *string `json:"reviewDate"`
	// ReviewEvery is how often the risk is reviewed (P1M, P3M, P6M, P1Y); nil
	// when it has no cadence. A review sets ReviewDate to its day plus this.
	ReviewEvery *RiskReviewEvery `json:"reviewEvery"`
	// ResidualLikelihood is 1–5 after treatment; nil when not assessed.
	ResidualLikelihood *int `json:"residualLikelihood"`
	// ResidualImpact is 1–5 after treatment; nil when not assessed.
	ResidualImpact *int `json:"residualImpact"`
	// ResidualScore is ResidualLikelihood × ResidualImpact, set by the server
	// (read-only); nil unless both are set.
	ResidualScore *int `json:"residualScore"`
	// Metadata is your own key-value pairs (at most 50 keys of 1–40
	// characters [A-Za-z0-9_.-], values up to 500 characters); empty, never nil.
	Metadata map[string]string `json:"metadata"`
	// Version is 1 at creation and one more for each change; ETag() is the
	// value to send as Params.IfMatch.
	Version int64 `json:"version"`
	// CreatedAt is when the risk was created (server clock).
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when the risk last changed (server clock).
	UpdatedAt time.Time `json:"updatedAt"`
	// Livemode is false for test data: the tenant's sandbox, which test keys
	// (rk_test_…) reach (docs/sandboxes.md).
	Livemode bool `json:"livemode"`

	// LastResponse describes the HTTP exchange that returned this risk:
	// request id, idempotency key, whether it was a replay. For items of a
	// list it is the exchange of their page.
	LastResponse *APIResponse `json:"-"`
}

// RiskOwner is a risk's owner as the server answers it (API version
// 2027-01-15, docs/api-versions.md): one of the tenant's users, or a name.
type RiskOwner struct {
	// UserID is the user's id, "usr_…", for a user owner; nil for a name owner.
	UserID *string `json:"userId"`
	// Name is the user's email for a user owner, else the name given; empty
	// when the risk has no owner.
	Name string `json:"name"`
}

// RiskOwnerParams name a risk's owner in a write. Set exactly one field:
// UserID for one of the tenant's users (else 400 OWNER_USER_UNKNOWN), Name for
// anyone else; both or neither is 400 VALIDATION_FAILED.
type RiskOwnerParams struct {
	// UserID is a user of the tenant, "usr_…".
	UserID *string `json:"userId,omitempty"`
	// Name is free text, e.g. a team; Ptr("") means no owner.
	Name *string `json:"name,omitempty"`
}

// RiskCreateParams are the fields of a new risk. Only Title is required;
// empty strings and nil pointers are left out of the request, so the server
// applies its defaults.
type RiskCreateParams struct {
	Params `json:"-"`

	// Title is required, 1–200 characters.
	Title string `json:"title"`
	// Description is free text.
	Description string `json:"description,omitempty"`
	// Category is a free-form grouping, e.g. "compliance".
	Category string `json:"category,omitempty"`
	// Likelihood is 1–5.
	Likelihood *int `json:"likelihood,omitempty"`
	// Impact is 1–5.
	Impact *int `json:"impact,omitempty"`
	// RiskScore is 1–25; leave nil to have Likelihood × Impact.
	RiskScore *int `json:"riskScore,omitempty"`
	// Status defaults to open.
	Status RiskStatus `json:"status,omitempty"`
	// Owner is who is responsible: set one of UserID (a user of the tenant)
	// and Name; nil for no owner.
	Owner *RiskOwnerParams `json:"owner,omitempty"`
	// Treatment is accept, mitigate, transfer or avoid; empty for none.
	Treatment RiskTreatment `json:"treatment,omitempty"`
	// ReviewDate is YYYY-MM-DD; empty for none.
	ReviewDate string `json:"reviewDate,omitempty"`
	// ReviewEvery is P1M, P3M, P6M or P1Y; empty for no cadence.
	ReviewEvery RiskReviewEvery `json:"reviewEvery,omitempty"`
	// ResidualLikelihood is 1–5.
	ResidualLikelihood *int `json:"residualLikelihood,omitempty"`
	// ResidualImpact is 1–5.
	ResidualImpact *int `json:"residualImpact,omitempty"`
	// Metadata is your own key-value pairs (see Risk.Metadata).
	Metadata map[string]string `json:"metadata,omitempty"`
}

// RiskReplaceParams are the complete new contents of a risk for Replace
// (PUT), with the fields of RiskCreateParams: fields left empty take the
// server's defaults, not their old values.
type RiskReplaceParams RiskCreateParams

// RiskUpdateParams are the changes of Update (PATCH). Only non-nil fields are
// sent, and the server keeps every field that is not sent. Set a text field
// to Ptr("") to empty it, and a Clear… flag to remove a number (it is sent as
// null).
type RiskUpdateParams struct {
	Params

	// Title, when set, is 1–200 characters.
	Title *string
	// Description, when set, replaces the text; Ptr("") empties it.
	Description *string
	// Category, when set, replaces the grouping; Ptr("") empties it.
	Category *string
	// Likelihood is 1–5.
	Likelihood *int
	// Impact is 1–5.
	Impact *int
	// RiskScore is 1–25. When Likelihood or Impact change and RiskScore is
	// not given, the server derives the score again.
	RiskScore *int
	// Status, when set, moves the risk to open, mitigated or closed.
	Status *RiskStatus
	// Owner, when set, replaces the owner: one of UserID and Name;
	// &RiskOwnerParams{Name: Ptr("")} removes it.
	Owner *RiskOwnerParams
	// Treatment, when set, replaces the treatment.
	Treatment *RiskTreatment
	// ReviewDate, when set, is YYYY-MM-DD.
	ReviewDate *string
	// ReviewEvery, when set, replaces the review cadence.
	ReviewEvery *RiskReviewEvery
	// ResidualLikelihood is 1–5.
	ResidualLikelihood *int
	// ResidualImpact is 1–5.
	ResidualImpact *int
	// Metadata is merged into the risk's key by key; a key set to "" is
	// removed, keys not given are kept.
	Metadata map[string]string

	// ClearLikelihood, ClearImpact and ClearRiskScore send the field as
	// null, unsetting it. Setting one together with its value is an error.
	ClearLikelihood, ClearImpact, ClearRiskScore bool
	// ClearTreatment, ClearReviewDate, ClearReviewEvery, ClearResidualLikelihood
	// and ClearResidualImpact do the same for those fields.
	ClearTreatment, ClearReviewDate, ClearReviewEvery, ClearResidualLikelihood, ClearResidualImpact bool
}

// MarshalJSON encodes the PATCH body: given fields only, cleared numbers as
// null. It fails if a number is both set and cleared.
func (p *RiskUpdateParams) MarshalJSON() ([]byte, error) {
	num := func(name string, v *int, clear bool) (json.RawMessage, error) {
		switch {
		case v != nil && clear:
			return nil, fmt.Errorf("riskapi: RiskUpdateParams: both %s and Clear%s are set", name, name)
		case clear:
			return json.RawMessage("null"), nil
		case v != nil:
			return json.RawMessage(strconv.Itoa(*v)), nil
		}
		return nil, nil
	}
	text := func(name string, v *string, clear bool) (json.RawMessage, error) {
		switch {
		case v != nil && clear:
			return nil, fmt.Errorf("riskapi: RiskUpdateParams: both %s and Clear%s are set", name, name)
		case clear:
			return json.RawMessage("null"), nil
		case v != nil:
			return json.Marshal(*v)
		}
		return nil, nil
	}
	w := struct {
		Title              *string           `json:"title,omitempty"`
		Description        *string           `json:"description,omitempty"`
		Category           *string           `json:"category,omitempty"`
		Likelihood         json.RawMessage   `json:"likelihood,omitempty"`
		Impact             json.RawMessage   `json:"impact,omitempty"`
		RiskScore          json.RawMessage   `json:"riskScore,omitempty"`
		Status             *RiskStatus       `json:"status,omitempty"`
		Owner              *RiskOwnerParams  `json:"owner,omitempty"`
		Treatment          json.RawMessage   `json:"treatment,omitempty"`
		ReviewDate         json.RawMessage   `json:"reviewDate,omitempty"`
		ReviewEvery        json.RawMessage   `json:"reviewEvery,omitempty"`
		ResidualLikelihood json.RawMessage   `json:"residualLikelihood,omitempty"`
		ResidualImpact     json.RawMessage   `json:"residualImpact,omitempty"`
		Metadata           map[string]string `json:"metadata,omitempty"`
	}{Title: p.Title, Description: p.Description, Category: p.Category, Status: p.Status, Owner: p.Owner,
		Metadata: p.Metadata}
	var err error
	if w.Treatment, err = text("Treatment", (*string)(p.Treatment), p.ClearTreatment); err != nil {
		return nil, err
	}
	if w.ReviewDate, err = text("ReviewDate", p.ReviewDate, p.ClearReviewDate); err != nil {
		return nil, err
	}
	if w.ReviewEvery, err = text("ReviewEvery", (*string)(p.ReviewEvery), p.ClearReviewEvery); err != nil {
		return nil, err
	}
	if w.ResidualLikelihood, err = num("ResidualLikelihood", p.ResidualLikelihood, p.ClearResidualLikelihood); err != nil {
		return nil, err
	}
	if w.ResidualImpact, err = num("ResidualImpact", p.ResidualImpact, p.ClearResidualImpact); err != nil {
		return nil, err
	}
	if w.Likelihood, err = num("Likelihood", p.Likelihood, p.ClearLikelihood); err != nil {
		return nil, err
	}
	if w.Impact, err = num("Impact", p.Impact, p.ClearImpact); err != nil {
		return nil, err
	}
	if w.RiskScore, err = num("RiskScore", p.RiskScore, p.ClearRiskScore); err != nil {
		return nil, err
	}
	return json.Marshal(w)
}

// RiskListParams selects where a listing starts and how many risks a page
// holds. A nil *RiskListParams lists everything with the server's page size.
type RiskListParams struct {
	Params

	// Limit is the page size; 0 means the server's default. It changes how
	// many requests a full listing takes, not how many risks it yields.
	Limit int
	// Cursor starts the listing after an earlier page: a Page.NextCursor of
	// the same filters and sort (another query's cursor is refused).
	Cursor string
	// RiskFilter selects which risks are listed; the zero value lists all.
	RiskFilter
	// Sort orders the list: "createdAt", "updatedAt", "riskScore", "title",
	// "reviewDate" or "residualScore", "-" in front for descending; "" is "-createdAt".
	Sort string
}

// RiskDeleteParams are the request options of DeleteWithParams.
type RiskDeleteParams struct {
	Params
}

var errEmptyID = errors.New("riskapi: empty id")

func riskPath(id string) string { return "/v2/risks/" + url.PathEscape(id) }

// Create creates a risk (POST /v2/risks, answered 201). The call is keyed
// (see Params.IdempotencyKey), so its retries never create a second risk.
//
// Errors: *Error with 400 VALIDATION_FAILED for invalid fields (Errors names
// them), 401, 403 without the risks:write scope, 422 IDEMPOTENCY_KEY_REUSED
// if a caller-given key was used for a different request.
func (s *RisksService) Create(ctx context.Context, p *RiskCreateParams) (*Risk, error) {
	if p == nil {
		return nil, errors.New("riskapi: Risks.Create: nil params")
	}
	return s.write(ctx, http.MethodPost, "/v2/risks", &p.Params, p)
}

// Get fetches the risk with the given id (GET /v2/risks/{id}).
//
// Errors: *Error with 404 NOT_FOUND if it does not exist or belongs to
// another tenant.
func (s *RisksService) Get(ctx context.Context, id string) (*Risk, error) {
	if id == "" {
		return nil, errEmptyID
	}
	r := new(Risk)
	info, err := s.client.doJSON(ctx, http.MethodGet, riskPath(id), nil, nil, nil, r)
	if err != nil {
		return nil, err
	}
	r.LastResponse = info
	return r, nil
}

// Update changes the fields set in p and keeps the others (PATCH
// /v2/risks/{id}), returning the updated risk.
//
// Errors: *Error with 404 NOT_FOUND, 400 VALIDATION_FAILED, 422
// IDEMPOTENCY_KEY_REUSED.
func (s *RisksService) Update(ctx context.Context, id string, p *RiskUpdateParams) (*Risk, error) {
	if id == "" {
		return nil, errEmptyID
	}
	if p == nil {
		p = &RiskUpdateParams{}
	}
	return s.write(ctx, http.MethodPatch, riskPath(id), &p.Params, p)
}

// Replace overwrites the whole risk with p (PUT /v2/risks/{id}), returning
// the new state.
//
// Errors: *Error with 404 NOT_FOUND, 400 VALIDATION_FAILED, 422
// IDEMPOTENCY_KEY_REUSED.
func (s *RisksService) Replace(ctx context.Context, id string, p *RiskReplaceParams) (*Risk, error) {
	if id == "" {
		return nil, errEmptyID
	}
	if p == nil {
		return nil, errors.New("riskapi: Risks.Replace: nil params")
	}
	return s.write(ctx, http.MethodPut, riskPath(id), &p.Params, p)
}

// Delete deletes the risk with the given id (DELETE /v2/risks/{id}, answered
// 204). A retry after a lost response gets the stored 204 replayed rather than
// a 404.
//
// Errors: *Error with 404 NOT_FOUND. Use DeleteWithParams to choose the
// idempotency key or to see the response details.
func (s *RisksService) Delete(ctx context.Context, id string) error {
	_, err := s.DeleteWithParams(ctx, id, nil)
	return err
}

// DeleteWithParams is Delete with request options (p may be nil); it returns
// the details of the final response, e.g. whether the 204 was a replay.
func (s *RisksService) DeleteWithParams(ctx context.Context, id string, p *RiskDeleteParams) (*APIResponse, error) {
	if id == "" {
		return nil, errEmptyID
	}
	var params *Params
	if p != nil {
		params = &p.Params
	}
	info, err := s.client.doJSON(ctx, http.MethodDelete, riskPath(id), nil, params, nil, nil)
	return info, staleRisk(err)
}

// List returns the tenant's risks as a sequence, fetching pages of
// p.Limit (GET /v2/risks?limit=&cursor=) as the loop advances:
//
//	for r, err := range c.Risks.List(ctx, nil) {
//		if err != nil { return err }
//		…
//	}
//
// Each page is one call with its own retries. On error the sequence yields
// (nil, err) once and ends. Breaking out of the loop stops further requests.
func (s *RisksService) List(ctx context.Context, p *RiskListParams) iter.Seq2[*Risk, error] {
	if p == nil {
		p = &RiskListParams{}
	}
	return paginate(ctx, p.Cursor, func(ctx context.Context, cursor string) (*Page[Risk], error) {
		q := *p
		q.Cursor = cursor
		return s.ListPage(ctx, &q)
	})
}

// ListPage fetches a single page of risks starting at p.Cursor, for callers
// that keep the cursor themselves (e.g. across requests of their own).
//
// Errors: *Error with 400 VALIDATION_FAILED for a bad limit or cursor.
func (s *RisksService) ListPage(ctx context.Context, p *RiskListParams) (*Page[Risk], error) {
	q := url.Values{}
	var params *Params
	if p != nil {
		if p.Limit > 0 {
			q.Set("limit", strconv.Itoa(p.Limit))
		}
		if p.Cursor != "" {
			q.Set("cursor", p.Cursor)
		}
		p.RiskFilter.addTo(q)
		if p.Sort != "" {
			q.Set("sort", p.Sort)
		}
		params = &p.Params
	}
	return getPage[Risk](ctx, s.client, "/v2/risks", q, params)
}

func (r *Risk) setLastResponse(info *APIResponse) { r.LastResponse = info }

// ETag returns the entity tag of r's version, `"<version>"`: what the server
// sends as ETag and what Params.IfMatch takes.
func (r *Risk) ETag() string { return `"` + strconv.FormatInt(r.Version, 10) + `"` }

// write sends body with method to path and decodes the risk answered.
func (s *RisksService) write(ctx context.Context, method, path string, params *Params, body any) (*Risk, error) {
	r := new(Risk)
	info, err := s.client.doJSON(ctx, method, path, nil, params, body, r)
	if err != nil {
		return nil, staleRisk(err)
	}
	r.LastResponse = info
	return r, nil
}
