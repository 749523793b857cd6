// Package eventhttp is the HTTP adapter of events and outbound webhooks: listing and
// reading events (/v1 and /v2, scope events:read), managing webhook endpoints and
// their delivery log, and redelivering an event (/v1, administrators only), each
// route declaring its policy (route.Route). Capture links a request to the events
// its unit of work emits.
package eventhttp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/apiversion"
	"github.com/riskapi/riskapi/internal/events"
	"github.com/riskapi/riskapi/internal/events/delivery"
	"github.com/riskapi/riskapi/internal/events/endpointview"
	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/route"
	"github.com/riskapi/riskapi/internal/tenants"
)

// Config wires the handlers.
type Config struct {
	// Events reads events. Required.
	Events events.Store
	// Endpoints manages endpoints and redeliveries. Required.
	Endpoints *events.Endpoints
	// Wake, optional, is woken once deliveries are committed (the worker).
	Wake Waker
	// Metrics, optional, counts committed events.
	Metrics *Metrics
	// Pinger sends an endpoint its test message at once (delivery.Sender).
	// Required for POST /v1/webhook-endpoints/{id}/ping.
	Pinger Pinger
	// RequireIfMatch refuses a PATCH of an endpoint without If-Match (428), as
	// REQUIRE_IF_MATCH does a risk's.
	RequireIfMatch bool
}

// Pinger sends an endpoint.ping (delivery.Sender.Ping).
type Pinger interface {
	Ping(ctx context.Context, e *events.Endpoint) delivery.PingResult
}

type handlers struct{ Config }

// Routes declares the event routes. Endpoint management answers secrets or changes
// where the tenant's data goes, so it is /v1 and admin only; creating an endpoint
// refuses Idempotency-Key, since its response carries the secret, which must never
// sit in an idempotency record (docs/idempotency.md).
func Routes(cfg Config) []route.Route {
	h := handlers{cfg}
	read := tenants.ScopeEventsRead
	return []route.Route{
		{Method: http.MethodGet, Path: "/events", Handler: h.list, Versions: route.Both, Scope: read, Resource: "event"},
		{Method: http.MethodGet, Path: "/events/:id", Handler: h.get, Versions: route.Both, Scope: read, Resource: "event"},
		// A redelivery is a POST to every endpoint: once a minute per event, and ten
		// a minute per tenant, at most (docs/events.md).
		{Method: http.MethodPost, Path: "/events/:id/redeliver", Handler: h.redeliver, Versions: route.V1, Admin: true,
			Exists: h.eventExists, OncePer: time.Minute, PerTenant: route.Quota{N: 10, Per: time.Minute}},
		{Method: http.MethodPost, Path: "/webhook-endpoints", Handler: h.createEndpoint, Versions: route.V1, Admin: true,
			Idempotency: idempotency.Unsupported},
		{Method: http.MethodGet, Path: "/webhook-endpoints", Handler: h.listEndpoints, Versions: route.V1, Admin: true},
		{Method: http.MethodDelete, Path: "/webhook-endpoints/:id", Handler: h.deleteEndpoint, Versions: route.V1, Admin: true},
		{Method: http.MethodGet, Path: "/webhook-endpoints/:id/deliveries", Handler: h.deliveries, Versions: route.V1, Admin: true},
		// The endpoint's lifecycle (contract section 19, docs/events.md).
		{Method: http.MethodGet, Path: "/webhook-endpoints/:id", Handler: h.getEndpoint, Versions: route.V1, Admin: true},
		{Method: http.MethodPatch, Path: "/webhook-endpoints/:id", Handler: h.updateEndpoint, Versions: route.V1, Admin: true},
		{Method: http.MethodPost, Path: "/webhook-endpoints/:id/disable", Handler: h.disableEndpoint, Versions: route.V1, Admin: true},
		{Method: http.MethodPost, Path: "/webhook-endpoints/:id/enable", Handler: h.enableEndpoint, Versions: route.V1, Admin: true},
		// A ping is a POST to a URL the tenant chose, at once: bounded per tenant.
		{Method: http.MethodPost, Path: "/webhook-endpoints/:id/ping", Handler: h.pingEndpoint, Versions: route.V1, Admin: true,
			PerTenant: route.Quota{N: 10, Per: time.Minute}},
		// Its response carries the new secret: no idempotency record may keep it.
		{Method: http.MethodPost, Path: "/webhook-endpoints/:id/roll-secret", Handler: h.rollSecret, Versions: route.V1, Admin: true,
			Idempotency: idempotency.Unsupported},
	}
}

func (h handlers) list(c echo.Context) error {
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	p, err := route.PagingOf(c, ids.Event)
	if err != nil {
		return err
	}
	f := events.Filter{Limit: p.Limit, Before: p.After}
	if t := c.QueryParam("type"); t != "" {
		if !events.Type(t).Valid() {
			return problem.Invalid("type", "must be one of "+events.TypeNames())
		}
		f.Type = events.Type(t)
	}
	evs, more, err := h.Events.List(c.Request().Context(), tenant, f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, route.NewPage(evs, more,
		func(e *events.Event) string { return e.ID }, func(e *events.Event) json.RawMessage { return payloadOf(e) }))
}

// target returns the caller's tenant and the :id parameter, which must be an ID with
// prefix: anything else is notFound (a 404) without touching the store.
func target(c echo.Context, prefix string, notFound error) (tenant, id string, err error) {
	if tenant, err = route.Tenant(c); err != nil {
		return "", "", err
	}
	if id = c.Param("id"); !ids.Valid(prefix, id) {
		return "", "", notFound
	}
	return tenant, id, nil
}

func (h handlers) event(c echo.Context) (*events.Event, error) {
	tenant, id, err := target(c, ids.Event, events.ErrNotFound)
	if err != nil {
		return nil, err
	}
	return h.Events.Get(c.Request().Context(), tenant, id)
}

// eventExists is 404 for an event the tenant does not have, before a redelivery's
// limits count the request.
func (h handlers) eventExists(c echo.Context) error {
	_, err := h.event(c)
	return err
}

func (h handlers) get(c echo.Context) error {
	ev, err := h.event(c)
	if err != nil {
		return err
	}
	return c.JSONBlob(http.StatusOK, ev.Payload)
}

func (h handlers) redeliver(c echo.Context) error {
	tenant, id, err := target(c, ids.Event, events.ErrNotFound)
	if err != nil {
		return err
	}
	n, err := h.Endpoints.Redeliver(c.Request().Context(), tenant, id)
	if err != nil {
		return err
	}
	if h.Wake != nil && n > 0 {
		h.Wake.Wake()
	}
	return c.JSON(http.StatusAccepted, redeliverResponse{EventID: id, Deliveries: n})
}

func (h handlers) createEndpoint(c echo.Context) error {
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	var req endpointRequest
	if err := jsonbody.DecodeRequest(c.Request(), &req); err != nil {
		return err
	}
	version, err := endpointVersion(c, req.APIVersion)
	if err != nil {
		return err
	}
	e, err := h.Endpoints.Create(c.Request().Context(), tenant, req.URL, req.Events, version)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, c.Request().URL.Path+"/"+e.ID)
	// Its version from the start, so that the first PATCH needs no GET.
	c.Response().Header().Set("ETag", endpointview.ETag(e))
	return c.JSON(http.StatusCreated, createdEndpointResponse{Endpoint: endpointview.Of(e), Secret: e.Secret})
}

func (h handlers) listEndpoints(c echo.Context) error {
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	eps, err := h.Endpoints.Store.Endpoints(c.Request().Context(), tenant)
	if err != nil {
		return err
	}
	// A tenant has few endpoints: one page, in the list envelope of every list.
	return c.JSON(http.StatusOK, route.NewPage(eps, false,
		func(e *events.Endpoint) string { return e.ID }, endpointview.Of))
}

func (h handlers) deleteEndpoint(c echo.Context) error {
	tenant, id, err := target(c, ids.Endpoint, events.ErrEndpointNotFound)
	if err != nil {
		return err
	}
	// Honoured when sent, not required (as disable and enable): the dashboard's
	// delete asks first and sends none (docs/events.md).
	ifMatch, err := h.ifMatch(c, false)
	if err != nil {
		return err
	}
	if err := h.Endpoints.Delete(c.Request().Context(), tenant, id, ifMatch); err != nil {
		return staleProblem(c.Request().Header, err)
	}
	return c.NoContent(http.StatusNoContent)
}

func (h handlers) deliveries(c echo.Context) error {
	tenant, id, err := target(c, ids.Endpoint, events.ErrEndpointNotFound)
	if err != nil {
		return err
	}
	f, err := attemptPaging(c)
	if err != nil {
		return err
	}
	as, more, err := h.Endpoints.Store.Attempts(c.Request().Context(), tenant, id, f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, route.NewPage(as, more,
		func(a *events.Attempt) string { return strconv.FormatInt(a.ID, 10) }, toAttempt(tenant)))
}

// attemptPaging parses ?limit and ?cursor of the delivery log, whose cursor names an
// attempt's sequence number rather than a prefixed ID.
func attemptPaging(c echo.Context) (events.AttemptFilter, error) {
	f := events.AttemptFilter{Limit: route.DefaultLimit}
	if s := c.QueryParam("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > route.MaxLimit {
			return f, problem.Invalid("limit", "must be an integer from 1 to "+strconv.Itoa(route.MaxLimit))
		}
		f.Limit = n
	}
	if s := c.QueryParam("cursor"); s != "" {
		raw, err := base64.RawURLEncoding.DecodeString(s)
		n, perr := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || perr != nil || n <= 0 {
			return f, problem.Invalid("cursor", "is not a cursor this API returned")
		}
		f.Before = n
	}
	return f, nil
}

// endpointVersion is the API version a new endpoint's deliveries are rendered in:
// the one its creation names, else the tenant's pin (docs/api-versions.md).
func endpointVersion(c echo.Context, named *string) (apiversion.Version, error) {
	if named != nil {
		v, err := apiversion.API.Parse(*named)
		if err != nil {
			return "", problem.New(problem.APIVersionUnknown, "apiVersion: no API version is named %q", *named)
		}
		return v, nil
	}
	p, err := route.Principal(c)
	if err != nil {
		return "", err
	}
	v, err := apiversion.API.Parse(p.APIVersion)
	if err != nil {
		return apiversion.API.Newest(), nil
	}
	return v, nil
}
