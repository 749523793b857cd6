package riskhttp

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/etag"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskview"
	"github.com/riskapi/riskapi/internal/route"
)

// respond sends r with its ETag: every response that carries one risk does
// (docs/openapi.yaml).
func respond(c echo.Context, status int, r *risks.Risk) error {
	c.Response().Header().Set("ETag", riskview.ETag(r))
	return c.JSON(status, riskview.Of(r))
}

// notModified answers 304 with r's ETag and no body when If-None-Match names r's
// version (weak comparison, as RFC 9110 section 13.1.2 requires), and reports
// whether it did. Errors: 400 for an If-None-Match that is no list of ETags.
func notModified(c echo.Context, r *risks.Risk) (bool, error) {
	none, given, err := etag.FromHeader(c.Request().Header, "If-None-Match")
	if err != nil {
		return false, problem.Invalid("If-None-Match", err.Error())
	}
	if !given || !none.MatchWeak(strconv.FormatInt(r.Version, 10)) {
		return false, nil
	}
	c.Response().Header().Set("ETag", riskview.ETag(r))
	return true, c.NoContent(http.StatusNotModified)
}

// target is what a PATCH, PUT or DELETE acts on: the tenant, the risk's :id, and
// its If-Match, read once (nil: none sent) for both the write's precondition and the
// 412 that refuses it.
type target struct {
	tenant, id string
	ifMatch    *etag.List
}

// target reads c's target. Errors: 404 for an ID that names no risk; 428
// PRECONDITION_REQUIRED without If-Match when RequireIfMatch is set; 400 for an
// If-Match that is no list of ETags.
func (h handlers) target(c echo.Context) (target, error) {
	id := c.Param("id")
	if !ids.Valid(ids.Risk, id) {
		return target{}, risks.ErrNotFound
	}
	tenant, err := route.Tenant(c)
	if err != nil {
		return target{}, err
	}
	l, given, err := etag.IfMatch(c.Request().Header)
	switch {
	case err != nil:
		return target{}, problem.Invalid("If-Match", err.Error())
	case !given && h.requireIfMatch:
		return target{}, problem.New(problem.PreconditionRequired,
			`this server requires If-Match on writes of a risk: send the ETag of the version you read (or "*")`)
	case !given:
		return target{tenant: tenant, id: id}, nil
	}
	return target{tenant: tenant, id: id, ifMatch: &l}, nil
}

// precondition is t's If-Match as the domain checks it: nil when none was sent.
func (t target) precondition() risks.IfMatch {
	if t.ifMatch == nil {
		return nil
	}
	l := *t.ifMatch
	return func(v int64) bool { return l.MatchStrong(strconv.FormatInt(v, 10)) }
}

// stale turns a write refused for t's If-Match into 412 PRECONDITION_FAILED whose
// "current" member is the risk as stored now; other errors pass unchanged.
func (t target) stale(err error) error {
	var s *risks.StaleError
	if !errors.As(err, &s) {
		return err
	}
	var detail string
	if t.ifMatch != nil {
		detail = etag.StaleDetail(*t.ifMatch, "risk", s.Current.Version)
	}
	return &problem.Problem{Code: problem.PreconditionFailed, Current: riskview.Of(s.Current), Detail: detail}
}
