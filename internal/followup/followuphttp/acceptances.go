package followuphttp

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/followup"
	"github.com/riskapi/riskapi/internal/followup/followupview"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/route"
)

// acceptanceBody is the body of POST /risks/{id}/acceptances.
type acceptanceBody struct {
	Justification *string `json:"justification"`
	ValidUntil    *string `json:"validUntil"`
}

func (h handlers) requestAcceptance(c echo.Context) error {
	var b acceptanceBody
	if err := jsonbody.DecodeRequest(c.Request(), &b); err != nil {
		return err
	}
	tenant, riskID, err := riskOf(c)
	if err != nil {
		return err
	}
	a, err := h.svc.RequestAcceptance(c.Request().Context(), tenant, riskID,
		followup.AcceptanceInput{Justification: b.Justification, ValidUntil: b.ValidUntil})
	if err != nil {
		return err
	}
	return respondAcceptance(c, http.StatusCreated, a)
}

func respondAcceptance(c echo.Context, status int, a *followup.Acceptance) error {
	c.Response().Header().Set("ETag", followupview.AcceptanceETag(a))
	return c.JSON(status, followupview.OfAcceptance(a))
}

// decisionBody is the body of approve and reject.
type decisionBody struct {
	Note *string `json:"note"`
}

// decide approves (approve) or rejects the acceptance :id.
func (h handlers) decide(approve bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		var b decisionBody
		if err := jsonbody.DecodeRequest(c.Request(), &b); err != nil {
			return err
		}
		id := c.Param("id")
		if !ids.Valid(ids.Acceptance, id) {
			return followup.ErrAcceptanceNotFound
		}
		tenant, err := route.Tenant(c)
		if err != nil {
			return err
		}
		note := ""
		if b.Note != nil {
			note = *b.Note
		}
		a, err := h.svc.Decide(c.Request().Context(), tenant, id, approve, note)
		if err != nil {
			return err
		}
		return respondAcceptance(c, http.StatusOK, a)
	}
}

func (h handlers) getAcceptance(c echo.Context) error {
	id := c.Param("id")
	if !ids.Valid(ids.Acceptance, id) {
		return followup.ErrAcceptanceNotFound
	}
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	a, err := h.svc.Store.Acceptance(c.Request().Context(), tenant, id)
	if err != nil {
		return err
	}
	return respondAcceptance(c, http.StatusOK, a)
}

func (h handlers) riskAcceptances(c echo.Context) error {
	tenant, riskID, err := riskOf(c)
	if err != nil {
		return err
	}
	p, err := route.PagingOf(c, ids.Acceptance)
	if err != nil {
		return err
	}
	if err := h.riskExists(c, tenant, riskID); err != nil {
		return err
	}
	return h.listAcceptances(c, tenant, followup.AcceptanceFilter{RiskID: riskID, Before: p.After, Limit: p.Limit})
}

func (h handlers) acceptances(c echo.Context) error {
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	p, perr := route.PagingOf(c, ids.Acceptance)
	q := c.QueryParams()
	f := followup.AcceptanceFilter{Status: followup.AcceptanceStatus(q.Get("status")), Before: p.After, Limit: p.Limit}
	var errs []problem.FieldError
	for k := range q {
		if k != "status" && k != "limit" && k != "cursor" {
			errs = append(errs, problem.FieldError{Field: k, Detail: "is not a parameter of this list"})
		}
	}
	switch f.Status {
	case "", followup.AcceptancePending, followup.AcceptanceApproved, followup.AcceptanceRejected, followup.AcceptanceExpired:
	default:
		errs = append(errs, problem.FieldError{Field: "status", Detail: "must be one of pending, approved, rejected, expired"})
	}
	if err := problem.Join(perr, fieldsError(errs)); err != nil {
		return err
	}
	return h.listAcceptances(c, tenant, f)
}

func (h handlers) listAcceptances(c echo.Context, tenant string, f followup.AcceptanceFilter) error {
	as, more, err := h.svc.Store.Acceptances(c.Request().Context(), tenant, f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, route.NewPage(as, more, func(a *followup.Acceptance) string { return a.ID }, followupview.OfAcceptance))
}
