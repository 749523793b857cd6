// Package sourcehttp is the HTTP adapter of a tenant's inbound webhook sources
// (/v1/webhook-sources, admin-only; docs/roles-and-credentials.md): list them, create
// one — the only response that ever carries its signing secret — and delete one, after
// which deliveries signed with its secret get 401.
package sourcehttp

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/route"
	"github.com/riskapi/riskapi/internal/webhooks"
	"github.com/riskapi/riskapi/internal/webhooks/sourceview"
)

// Config wires the handlers.
type Config struct {
	// Service manages sources. Required.
	Service *webhooks.Service
}

type handlers struct{ Config }

// Routes declares the source routes, all admin-only. POST refuses Idempotency-Key
// (422 IDEMPOTENCY_UNSUPPORTED_ROUTE): its response carries the secret, which must
// never be kept in an idempotency record (docs/idempotency.md).
func Routes(cfg Config) []route.Route {
	h := handlers{cfg}
	return []route.Route{
		{Method: http.MethodGet, Path: "/webhook-sources", Handler: h.list, Versions: route.V1, Admin: true},
		{Method: http.MethodPost, Path: "/webhook-sources", Handler: h.create, Versions: route.V1, Admin: true,
			Idempotency: idempotency.Unsupported},
		{Method: http.MethodDelete, Path: "/webhook-sources/:id", Handler: h.delete, Versions: route.V1, Admin: true},
	}
}

// createdSource is the one response that carries the secret.
type createdSource struct {
	sourceview.Source
	Secret string `json:"secret"`
}

type createRequest struct {
	Source string `json:"source"`
}

func (h handlers) list(c echo.Context) error {
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	pg, err := route.PagingOf(c, ids.Webhook)
	if err != nil {
		return err
	}
	srcs, more, err := h.Service.Sources(c.Request().Context(), tenant, pg.After, pg.Limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, route.NewPage(srcs, more, func(s *webhooks.Source) string { return s.ID }, sourceview.Of))
}

func (h handlers) create(c echo.Context) error {
	var req createRequest
	if err := jsonbody.DecodeRequest(c.Request(), &req); err != nil {
		return err
	}
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	src, err := h.Service.CreateSource(c.Request().Context(), tenant, req.Source)
	switch {
	case errors.Is(err, webhooks.ErrInvalidSourceName):
		return problem.Invalid("source", webhooks.ErrInvalidSourceName.Error())
	case errors.Is(err, webhooks.ErrSourceExists):
		// Source names are one namespace (the receiver's URL), across tenants.
		return problem.Invalid("source", "is taken; choose another name")
	case err != nil:
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, c.Request().URL.Path+"/"+src.ID)
	return c.JSON(http.StatusCreated, createdSource{Source: sourceview.Of(src), Secret: src.Secret})
}

func (h handlers) delete(c echo.Context) error {
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	id := c.Param("id")
	if !ids.Valid(ids.Webhook, id) {
		return webhooks.ErrSourceNotFound
	}
	if err := h.Service.DeleteSource(c.Request().Context(), tenant, id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
