package eventhttp

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/apiversion"
	"github.com/riskapi/riskapi/internal/etag"
	"github.com/riskapi/riskapi/internal/events"
	"github.com/riskapi/riskapi/internal/events/endpointview"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/problem"
)

// endpointPatch is PATCH /v1/webhook-endpoints/{id}'s body: members left out are
// left as they are.
type endpointPatch struct {
	URL         *string   `json:"url"`
	Events      *[]string `json:"events"`
	Description *string   `json:"description"`
	// APIVersion is the version its deliveries are rendered in from now on.
	APIVersion *string `json:"apiVersion"`
}

// rollSecretRequest is POST /v1/webhook-endpoints/{id}/roll-secret's body.
type rollSecretRequest struct {
	// ExpiresIn is how many seconds the old secret keeps signing: 0–604800.
	ExpiresIn *int64 `json:"expiresIn"`
}

// rolledSecretResponse is the endpoint with its new secret, shown this once.
type rolledSecretResponse struct {
	endpointview.Endpoint
	Secret string `json:"secret"`
}

// pingResponse is a ping's outcome.
type pingResponse struct {
	// Status is the endpoint's HTTP status, null when no response arrived.
	Status     *int    `json:"status"`
	Delivered  bool    `json:"delivered"`
	Error      *string `json:"error"`
	DurationMs int64   `json:"durationMs"`
}

func (h handlers) endpointParam(c echo.Context) (string, string, error) {
	return target(c, ids.Endpoint, events.ErrEndpointNotFound)
}

func (h handlers) getEndpoint(c echo.Context) error {
	tenant, id, err := h.endpointParam(c)
	if err != nil {
		return err
	}
	e, err := h.Endpoints.Get(c.Request().Context(), tenant, id)
	if err != nil {
		return err
	}
	return respondEndpoint(c, e)
}

// respondEndpoint answers e, 200, with its ETag.
func respondEndpoint(c echo.Context, e *events.Endpoint) error {
	c.Response().Header().Set("ETag", endpointview.ETag(e))
	return c.JSON(http.StatusOK, endpointview.Of(e))
}

// ifMatch reads If-Match as for a risk (contract section 12, docs/openapi.yaml):
// nil when not sent. Errors: 400 for a malformed header; 428 without one when
// REQUIRE_IF_MATCH is set and required.
func (h handlers) ifMatch(c echo.Context, required bool) (events.IfMatch, error) {
	l, given, err := etag.IfMatch(c.Request().Header)
	switch {
	case err != nil:
		return nil, problem.Invalid("If-Match", err.Error())
	case !given && required && h.RequireIfMatch:
		return nil, problem.New(problem.PreconditionRequired,
			`this server requires If-Match on writes: send the ETag of the version you read (or "*")`)
	case !given:
		return nil, nil
	}
	return func(v int64) bool { return l.MatchStrong(strconv.FormatInt(v, 10)) }, nil
}

// staleProblem is the 412 of a write whose If-Match (read from h) named another
// version.
func staleProblem(h http.Header, err error) error {
	var stale *events.StaleEndpointError
	if errors.As(err, &stale) {
		l, _, _ := etag.IfMatch(h) // read and checked before the write
		return &problem.Problem{Code: problem.PreconditionFailed, Current: endpointview.Of(stale.Current),
			Detail: etag.StaleDetail(l, "endpoint", stale.Current.Version)}
	}
	return err
}

func (h handlers) updateEndpoint(c echo.Context) error {
	var req endpointPatch
	if err := jsonbody.DecodeRequest(c.Request(), &req); err != nil {
		return err
	}
	tenant, id, err := h.endpointParam(c)
	if err != nil {
		return err
	}
	if req.APIVersion != nil {
		if _, err := apiversion.API.Parse(*req.APIVersion); err != nil {
			return problem.New(problem.APIVersionUnknown, "apiVersion: no API version is named %q", *req.APIVersion)
		}
	}
	ifMatch, err := h.ifMatch(c, true)
	if err != nil {
		return err
	}
	e, err := h.Endpoints.Update(c.Request().Context(), tenant, id, ifMatch,
		events.EndpointUpdate{URL: req.URL, Events: req.Events, Description: req.Description, APIVersion: req.APIVersion})
	if err != nil {
		return staleProblem(c.Request().Header, err)
	}
	return respondEndpoint(c, e)
}

func (h handlers) disableEndpoint(c echo.Context) error { return h.setDisabled(c, true) }

func (h handlers) enableEndpoint(c echo.Context) error { return h.setDisabled(c, false) }

func (h handlers) setDisabled(c echo.Context, disabled bool) error {
	tenant, id, err := h.endpointParam(c)
	if err != nil {
		return err
	}
	// If-Match is honoured when sent; REQUIRE_IF_MATCH covers an endpoint's PATCH
	// only (docs/errors.md, PRECONDITION_REQUIRED), not these POSTs.
	ifMatch, err := h.ifMatch(c, false)
	if err != nil {
		return err
	}
	e, err := h.Endpoints.SetDisabled(c.Request().Context(), tenant, id, ifMatch, disabled)
	if err != nil {
		return staleProblem(c.Request().Header, err)
	}
	return respondEndpoint(c, e)
}

func (h handlers) pingEndpoint(c echo.Context) error {
	tenant, id, err := h.endpointParam(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	e, err := h.Endpoints.Get(ctx, tenant, id)
	if err != nil {
		return err
	}
	r := h.Pinger.Ping(ctx, e)
	out := pingResponse{Delivered: r.Error == "", DurationMs: r.Duration.Milliseconds()}
	if r.StatusCode != 0 {
		out.Status = &r.StatusCode
	}
	if r.Error != "" {
		out.Error = &r.Error
	}
	return c.JSON(http.StatusOK, out)
}

func (h handlers) rollSecret(c echo.Context) error {
	var req rollSecretRequest
	if err := jsonbody.DecodeRequest(c.Request(), &req); err != nil {
		return err
	}
	tenant, id, err := h.endpointParam(c)
	if err != nil {
		return err
	}
	if req.ExpiresIn == nil || *req.ExpiresIn < 0 || *req.ExpiresIn > int64(events.MaxSecretOverlap/time.Second) {
		return problem.Invalid("expiresIn", "is required: 0–604800 seconds")
	}
	// If-Match is honoured when sent, as by disable and enable.
	ifMatch, err := h.ifMatch(c, false)
	if err != nil {
		return err
	}
	e, err := h.Endpoints.RollSecret(c.Request().Context(), tenant, id, ifMatch, time.Duration(*req.ExpiresIn)*time.Second)
	if err != nil {
		return staleProblem(c.Request().Header, err)
	}
	c.Response().Header().Set("ETag", endpointview.ETag(e))
	return c.JSON(http.StatusOK, rolledSecretResponse{Endpoint: endpointview.Of(e), Secret: e.Secret})
}
