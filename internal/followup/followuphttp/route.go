// Package followuphttp is the HTTP adapter of reviews, treatment actions and
// acceptances (docs/register.md, "The register in time"): served identically under
// /v1 and /v2, but for the decisions on an acceptance, which are an admin's and so
// /v1 only (API keys are never admins, docs/roles-and-credentials.md).
package followuphttp

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/etag"
	"github.com/riskapi/riskapi/internal/followup"
	"github.com/riskapi/riskapi/internal/followup/followupview"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/route"
	"github.com/riskapi/riskapi/internal/tenants"
)

// Config wires the handlers.
type Config struct {
	// Service runs writes; its Store serves reads. Required.
	Service *followup.Service
	// RequireIfMatch refuses a PATCH of an action without If-Match (428).
	RequireIfMatch bool
	// ReviewDueDays is REVIEW_DUE_DAYS: how far ahead a reviewDate makes a review
	// due on My work, as it makes risk.review_due.
	ReviewDueDays int
}

type handlers struct {
	svc            *followup.Service
	requireIfMatch bool
	reviewDueDays  int
}

// Routes declares the routes: reads need risks:read, writes risks:write, every
// write honours Idempotency-Key; approve and reject are admin-only, so /v1 only.
func Routes(cfg Config) []route.Route {
	h := handlers{svc: cfg.Service, requireIfMatch: cfg.RequireIfMatch, reviewDueDays: cfg.ReviewDueDays}
	read, write := tenants.ScopeRisksRead, tenants.ScopeRisksWrite
	return []route.Route{
		{Method: http.MethodPost, Path: "/risks/:id/reviews", Handler: h.review, Versions: route.Both, Scope: write},
		{Method: http.MethodGet, Path: "/risks/:id/reviews", Handler: h.reviews, Versions: route.Both, Scope: read},
		{Method: http.MethodPost, Path: "/risks/:id/actions", Handler: h.createAction, Versions: route.Both, Scope: write},
		{Method: http.MethodGet, Path: "/risks/:id/actions", Handler: h.riskActions, Versions: route.Both, Scope: read},
		{Method: http.MethodGet, Path: "/actions", Handler: h.actions, Versions: route.Both, Scope: read},
		{Method: http.MethodGet, Path: "/actions/:id", Handler: h.getAction, Versions: route.Both, Scope: read},
		{Method: http.MethodPatch, Path: "/actions/:id", Handler: h.patchAction, Versions: route.Both, Scope: write},
		{Method: http.MethodPost, Path: "/risks/:id/acceptances", Handler: h.requestAcceptance, Versions: route.Both, Scope: write, Resource: "acceptance"},
		{Method: http.MethodGet, Path: "/risks/:id/acceptances", Handler: h.riskAcceptances, Versions: route.Both, Scope: read, Resource: "acceptance"},
		{Method: http.MethodGet, Path: "/acceptances", Handler: h.acceptances, Versions: route.Both, Scope: read, Resource: "acceptance"},
		{Method: http.MethodGet, Path: "/acceptances/:id", Handler: h.getAcceptance, Versions: route.Both, Scope: read, Resource: "acceptance"},
		{Method: http.MethodPost, Path: "/acceptances/:id/approve", Handler: h.decide(true), Versions: route.V1, Scope: write, Admin: true, Resource: "acceptance"},
		{Method: http.MethodPost, Path: "/acceptances/:id/reject", Handler: h.decide(false), Versions: route.V1, Scope: write, Admin: true, Resource: "acceptance"},
		// A session's user's own work: an API key has no user.
		{Method: http.MethodGet, Path: "/my-work", Handler: h.myWork, Versions: route.V1, Scope: read},
	}
}

// riskOf returns the tenant and the risk ID :id names. Errors: risks.ErrNotFound
// for an ID of the wrong shape.
func riskOf(c echo.Context) (string, string, error) {
	id := c.Param("id")
	if !ids.Valid(ids.Risk, id) {
		return "", "", risks.ErrNotFound
	}
	tenant, err := route.Tenant(c)
	return tenant, id, err
}

// reviewBody is the body of POST /risks/{id}/reviews.
type reviewBody struct {
	Note    *string `json:"note"`
	Outcome *string `json:"outcome"`
}

func (h handlers) review(c echo.Context) error {
	var b reviewBody
	if err := jsonbody.DecodeRequest(c.Request(), &b); err != nil {
		return err
	}
	tenant, riskID, err := riskOf(c)
	if err != nil {
		return err
	}
	in := followup.ReviewInput{}
	if b.Note != nil {
		in.Note = *b.Note
	}
	if b.Outcome != nil {
		in.Outcome = followup.Outcome(*b.Outcome)
	}
	rv, err := h.svc.Review(c.Request().Context(), tenant, riskID, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, followupview.OfReview(rv))
}

func (h handlers) reviews(c echo.Context) error {
	tenant, riskID, err := riskOf(c)
	if err != nil {
		return err
	}
	p, err := route.PagingOf(c, ids.Review)
	if err != nil {
		return err
	}
	if err := h.riskExists(c, tenant, riskID); err != nil {
		return err
	}
	rs, more, err := h.svc.Store.Reviews(c.Request().Context(), tenant, riskID, p.After, p.Limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, route.NewPage(rs, more, func(r *followup.Review) string { return r.ID }, followupview.OfReview))
}

// riskExists answers 404 for a risk that is not the tenant's: a list of an absent
// risk's reviews is no empty list.
func (h handlers) riskExists(c echo.Context, tenant, riskID string) error {
	_, err := h.svc.RiskStore.Get(c.Request().Context(), tenant, riskID)
	return err
}

// actionBody is the body of POST /risks/{id}/actions.
type actionBody struct {
	Title   *string `json:"title"`
	OwnerID *string `json:"ownerId"`
	DueDate *string `json:"dueDate"`
}

func (h handlers) createAction(c echo.Context) error {
	var b actionBody
	if err := jsonbody.DecodeRequest(c.Request(), &b); err != nil {
		return err
	}
	tenant, riskID, err := riskOf(c)
	if err != nil {
		return err
	}
	a, err := h.svc.CreateAction(c.Request().Context(), tenant, riskID,
		followup.ActionInput{Title: b.Title, OwnerID: b.OwnerID, DueDate: b.DueDate})
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/"+version(c)+"/actions/"+a.ID)
	return respondAction(c, http.StatusCreated, a)
}

// version is "v1" or "v2", the version c was served under.
func version(c echo.Context) string {
	if len(c.Path()) > 3 && c.Path()[:3] == "/v2" {
		return "v2"
	}
	return "v1"
}

func respondAction(c echo.Context, status int, a *followup.Action) error {
	c.Response().Header().Set("ETag", followupview.ActionETag(a))
	return c.JSON(status, followupview.OfAction(a))
}

func (h handlers) riskActions(c echo.Context) error {
	tenant, riskID, err := riskOf(c)
	if err != nil {
		return err
	}
	p, err := route.PagingOf(c, ids.Action)
	if err != nil {
		return err
	}
	if err := h.riskExists(c, tenant, riskID); err != nil {
		return err
	}
	return h.listActions(c, tenant, followup.ActionFilter{RiskID: riskID, After: p.After, Limit: p.Limit})
}

func (h handlers) actions(c echo.Context) error {
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	p, perr := route.PagingOf(c, ids.Action)
	q := c.QueryParams()
	f := followup.ActionFilter{OwnerID: q.Get("ownerId"), Status: followup.ActionStatus(q.Get("status")),
		DueBefore: q.Get("dueBefore"), After: p.After, Limit: p.Limit}
	var errs []problem.FieldError
	for k := range q {
		switch k {
		case "ownerId", "status", "dueBefore", "limit", "cursor":
		default:
			errs = append(errs, problem.FieldError{Field: k, Detail: "is not a parameter of this list"})
		}
	}
	if f.OwnerID != "" && !ids.Valid(ids.User, f.OwnerID) {
		errs = append(errs, problem.FieldError{Field: "ownerId", Detail: "must be a user ID"})
	}
	if f.Status != "" && !f.Status.Valid() {
		errs = append(errs, problem.FieldError{Field: "status", Detail: "must be one of open, done, cancelled"})
	}
	if d := risks.DateDetail(f.DueBefore, false); f.DueBefore != "" && d != "" {
		errs = append(errs, problem.FieldError{Field: "dueBefore", Detail: d})
	}
	if err := problem.Join(perr, fieldsError(errs)); err != nil {
		return err
	}
	return h.listActions(c, tenant, f)
}

func (h handlers) listActions(c echo.Context, tenant string, f followup.ActionFilter) error {
	as, more, err := h.svc.Store.Actions(c.Request().Context(), tenant, f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, route.NewPage(as, more, func(a *followup.Action) string { return a.ID }, followupview.OfAction))
}

func (h handlers) getAction(c echo.Context) error {
	id := c.Param("id")
	if !ids.Valid(ids.Action, id) {
		return followup.ErrActionNotFound
	}
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	a, err := h.svc.Store.Action(c.Request().Context(), tenant, id)
	if err != nil {
		return err
	}
	return respondAction(c, http.StatusOK, a)
}

// actionPatch is the body of PATCH /actions/{id}.
type actionPatch struct {
	Title   jsonbody.Optional[string] `json:"title"`
	OwnerID jsonbody.Optional[string] `json:"ownerId"`
	DueDate jsonbody.Optional[string] `json:"dueDate"`
	Status  jsonbody.Optional[string] `json:"status"`
}

func (h handlers) patchAction(c echo.Context) error {
	var b actionPatch
	if err := jsonbody.DecodeRequest(c.Request(), &b); err != nil {
		return err
	}
	id := c.Param("id")
	if !ids.Valid(ids.Action, id) {
		return followup.ErrActionNotFound
	}
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	var p followup.ActionPatch
	for _, t := range []struct {
		name string
		in   jsonbody.Optional[string]
		out  **string
	}{{"title", b.Title, &p.Title}, {"ownerId", b.OwnerID, &p.OwnerID}} {
		if t.in.Set {
			if t.in.Null {
				return problem.Invalid(t.name, "cannot be null")
			}
			v := t.in.Value
			*t.out = &v
		}
	}
	if b.Status.Set {
		if b.Status.Null {
			return problem.Invalid("status", "cannot be null")
		}
		s := followup.ActionStatus(b.Status.Value)
		p.Status = &s
	}
	if b.DueDate.Set {
		p.DueDate = &risks.Nullable[string]{Value: b.DueDate.Value, Null: b.DueDate.Null}
	}
	ifMatch, err := h.ifMatch(c)
	if err != nil {
		return err
	}
	a, err := h.svc.UpdateAction(c.Request().Context(), tenant, id, ifMatch, p)
	var stale *followup.StaleActionError
	if errors.As(err, &stale) {
		l, _, _ := etag.IfMatch(c.Request().Header) // read and checked before the write
		return &problem.Problem{Code: problem.PreconditionFailed, Current: followupview.OfAction(stale.Current),
			Detail: etag.StaleDetail(l, "action", stale.Current.Version)}
	}
	if err != nil {
		return err
	}
	return respondAction(c, http.StatusOK, a)
}

// ifMatch reads If-Match as section 12 of the contract says (docs/openapi.yaml):
// nil when not sent. Errors: 400 for a malformed header; 428 without one when
// REQUIRE_IF_MATCH is set.
func (h handlers) ifMatch(c echo.Context) (risks.IfMatch, error) {
	l, given, err := etag.IfMatch(c.Request().Header)
	switch {
	case err != nil:
		return nil, problem.Invalid("If-Match", err.Error())
	case !given && h.requireIfMatch:
		return nil, problem.New(problem.PreconditionRequired,
			`this server requires If-Match on writes: send the ETag of the version you read (or "*")`)
	case !given:
		return nil, nil
	}
	return func(v int64) bool { return l.MatchStrong(strconv.FormatInt(v, 10)) }, nil
}

// fieldsError is errs as one VALIDATION_FAILED problem, or nil (never a nil
// *problem.Problem in an error).
func fieldsError(errs []problem.FieldError) error {
	if p := problem.Fields(errs); p != nil {
		return p
	}
	return nil
}

// myWork answers GET /v1/my-work: the signed-in user's due reviews, open actions
// and acceptances awaiting their decision, in the request's data (live or sandbox).
func (h handlers) myWork(c echo.Context) error {
	p, err := route.Principal(c)
	if err != nil {
		return err
	}
	limit, lerr := route.LimitOf(c)
	var errs []problem.FieldError
	for k := range c.QueryParams() {
		if k != "limit" {
			errs = append(errs, problem.FieldError{Field: k, Detail: "is not a parameter of this route"})
		}
	}
	if err := problem.Join(lerr, fieldsError(errs)); err != nil {
		return err
	}
	w, today, err := h.svc.MyWork(c.Request().Context(), p.Scope, p.CredentialID, p.Admin(), h.reviewDueDays, limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, followupview.OfMyWork(w, h.reviewDueDays, today))
}
