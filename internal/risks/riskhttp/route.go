// Package riskhttp is the HTTP adapter of the risk register: Echo handlers for the
// risk routes, mounted identically under /v1 and /v2. Authentication, scopes and
// idempotency are middleware around it; these handlers only speak risks.
package riskhttp

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
)

// Config wires the handlers.
type Config struct {
	// Store persists risks. Required.
	Store risks.Store
	// Now is the clock. Optional. Default time.Now.
	Now func() time.Time
}

// Page sizes of GET /risks.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

type handlers struct {
	store risks.Store
	now   func() time.Time
}

// Routes mounts the risk routes on g with the route middleware m, which must
// authenticate (auth.FromContext yields the tenant). Middleware is per route, not per
// group, so that a known path called with another method is 405, not a 404 from
// the group's catch-all.
func Routes(g *echo.Group, cfg Config, m ...echo.MiddlewareFunc) {
	h := handlers{store: cfg.Store, now: cfg.Now}
	if h.now == nil {
		h.now = time.Now
	}
	g.POST("/risks", h.create, m...)
	g.GET("/risks", h.list, m...)
	g.GET("/risks/:id", h.get, m...)
	g.PATCH("/risks/:id", h.patch, m...)
	g.PUT("/risks/:id", h.replace, m...)
	g.DELETE("/risks/:id", h.delete, m...)
}

// timestamp truncates to microseconds: what PostgreSQL keeps, so a risk reads back
// exactly as it was returned on creation.
func (h handlers) timestamp() time.Time { return h.now().UTC().Truncate(time.Microsecond) }

func tenantOf(c echo.Context) string { return auth.FromContext(c.Request().Context()).TenantID }

func (h handlers) create(c echo.Context) error {
	var req writeRequest
	if err := jsonbody.DecodeRequest(c.Request(), &req); err != nil {
		return err
	}
	r, err := risks.New(ids.New(ids.Risk), tenantOf(c), req.fields(), h.timestamp())
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := h.store.Create(ctx, r); err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, c.Request().URL.Path+"/"+r.ID)
	return c.JSON(http.StatusCreated, toResponse(r))
}

func (h handlers) get(c echo.Context) error {
	r, err := h.load(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toResponse(r))
}

func (h handlers) list(c echo.Context) error {
	f := risks.Filter{Limit: DefaultLimit}
	if s := c.QueryParam("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxLimit {
			return problem.Invalid("limit", "must be an integer from 1 to 100")
		}
		f.Limit = n
	}
	if s := c.QueryParam("cursor"); s != "" {
		raw, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil || !ids.Valid(ids.Risk, string(raw)) {
			return problem.Invalid("cursor", "is not a cursor this API returned")
		}
		f.Before = string(raw)
	}
	rs, more, err := h.store.List(c.Request().Context(), tenantOf(c), f)
	if err != nil {
		return err
	}
	resp := listResponse{Data: make([]riskResponse, len(rs)), HasMore: more}
	for i, r := range rs {
		resp.Data[i] = toResponse(r)
	}
	if more {
		next := base64.RawURLEncoding.EncodeToString([]byte(rs[len(rs)-1].ID))
		resp.NextCursor = &next
	}
	return c.JSON(http.StatusOK, resp)
}

func (h handlers) patch(c echo.Context) error {
	var req PatchRequest
	if err := jsonbody.DecodeRequest(c.Request(), &req); err != nil {
		return err
	}
	u, nullField := req.Update()
	if nullField != "" {
		return problem.Invalid(nullField, "cannot be null")
	}
	r, err := h.load(c)
	if err != nil {
		return err
	}
	if err := r.Apply(u, h.timestamp()); err != nil {
		return err
	}
	return h.save(c, r)
}

func (h handlers) replace(c echo.Context) error {
	var req writeRequest
	if err := jsonbody.DecodeRequest(c.Request(), &req); err != nil {
		return err
	}
	r, err := h.load(c)
	if err != nil {
		return err
	}
	if err := r.Replace(req.fields(), h.timestamp()); err != nil {
		return err
	}
	return h.save(c, r)
}

func (h handlers) save(c echo.Context, r *risks.Risk) error {
	if err := h.store.Update(c.Request().Context(), r); err != nil {
		return notFound(err)
	}
	return c.JSON(http.StatusOK, toResponse(r))
}

func (h handlers) delete(c echo.Context) error {
	id := c.Param("id")
	if !ids.Valid(ids.Risk, id) {
		return problem.New(problem.NotFound, "no such risk")
	}
	if err := h.store.Delete(c.Request().Context(), tenantOf(c), id); err != nil {
		return notFound(err)
	}
	return c.NoContent(http.StatusNoContent)
}

// load returns the tenant's risk named by the :id parameter; another tenant's risk
// is 404 like an absent one.
func (h handlers) load(c echo.Context) (*risks.Risk, error) {
	id := c.Param("id")
	if !ids.Valid(ids.Risk, id) {
		return nil, problem.New(problem.NotFound, "no such risk")
	}
	r, err := h.store.Get(c.Request().Context(), tenantOf(c), id)
	if err != nil {
		return nil, notFound(err)
	}
	return r, nil
}

func notFound(err error) error {
	if errors.Is(err, risks.ErrNotFound) {
		return problem.New(problem.NotFound, "no such risk")
	}
	return err
}
