// Package riskhttp is the HTTP adapter of the risk register: the risk routes, served
// identically under /v1 and /v2, each declaring its policy (route.Route). The server
// turns the policy into middleware; these handlers only speak risks.
package riskhttp

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskview"
	"github.com/riskapi/riskapi/internal/route"
	"github.com/riskapi/riskapi/internal/tenants"
)

// Config wires the handlers.
type Config struct {
	// Risks runs writes, each one unit of work, and its Store serves reads. Required.
	Risks *risks.Service
	// RequireIfMatch refuses PATCH, PUT and DELETE without If-Match (428,
	// REQUIRE_IF_MATCH).
	RequireIfMatch bool
	// MaxImportRows bounds a CSV import (MAX_IMPORT_ROWS): 413 past it. Required.
	MaxImportRows int
	// ImportTimeout bounds an import's store calls, its transactions included
	// (IMPORT_TIMEOUT; route.Route.StoreTimeout). Zero: the server's bound.
	ImportTimeout time.Duration
	// Now is the clock. Optional. Default time.Now.
	Now func() time.Time
	// Past answers the heat map's movedSince from the audit log (trends.Store).
	// Optional: without it movedSince is refused as unknown.
	Past PastReader
	// AuditLogTTL is AUDIT_LOG_TTL: a movedSince older than it is refused, its
	// entries being swept. Required with Past.
	AuditLogTTL time.Duration
}

// PastReader tells what risks were on a basis at an instant, from the changes
// since (trends.Store.Past); ok is false past its bound of entries.
type PastReader interface {
	Past(ctx context.Context, tenantID string, since time.Time, basis risks.Basis) (past map[string]risks.Past, ok bool, err error)
}

type handlers struct {
	risks          *risks.Service
	requireIfMatch bool
	maxImportRows  int
	now            func() time.Time
	past           PastReader
	auditLogTTL    time.Duration
}

// Routes declares the risk routes: reads need risks:read, writes risks:write, every
// write honours Idempotency-Key (docs/idempotency.md), every body is JSON but the
// import's, a multipart upload like an attachment's.
func Routes(cfg Config) []route.Route {
	h := handlers{risks: cfg.Risks, requireIfMatch: cfg.RequireIfMatch, maxImportRows: cfg.MaxImportRows, now: cfg.Now,
		past: cfg.Past, auditLogTTL: cfg.AuditLogTTL}
	if h.now == nil {
		h.now = time.Now
	}
	read, write := tenants.ScopeRisksRead, tenants.ScopeRisksWrite
	return []route.Route{
		{Method: http.MethodPost, Path: "/risks", Handler: h.create, Versions: route.Both, Scope: write, Resource: "risk"},
		{Method: http.MethodGet, Path: "/risks", Handler: h.list, Versions: route.Both, Scope: read, Costly: costlyList, Resource: "risk"},
		{Method: http.MethodGet, Path: "/risks/heatmap", Handler: h.heatmap, Versions: route.Both, Scope: read,
			Costly: costlyHeatmap},
		{Method: http.MethodGet, Path: "/risks/export", Handler: h.export, Versions: route.Both, Scope: read,
			Costly: route.AlwaysCostly, Resource: "risk"},
		{Method: http.MethodPost, Path: "/risks/import", Handler: h.importCSV, Versions: route.Both, Scope: write,
			Body: route.Body{Kind: route.UploadBody, Form: ImportForm}, StoreTimeout: cfg.ImportTimeout},
		{Method: http.MethodGet, Path: "/risks/:id", Handler: h.get, Versions: route.Both, Scope: read, Resource: "risk"},
		{Method: http.MethodPatch, Path: "/risks/:id", Handler: h.patch, Versions: route.Both, Scope: write, Resource: "risk"},
		{Method: http.MethodPut, Path: "/risks/:id", Handler: h.replace, Versions: route.Both, Scope: write, Resource: "risk"},
		{Method: http.MethodDelete, Path: "/risks/:id", Handler: h.delete, Versions: route.Both, Scope: write, Resource: "risk"},
	}
}

// timestamp truncates to microseconds: what PostgreSQL keeps, so a risk reads back
// exactly as it was returned on creation.
func (h handlers) timestamp() time.Time { return h.now().UTC().Truncate(time.Microsecond) }

func (h handlers) create(c echo.Context) error {
	var req riskview.Write
	if err := jsonbody.DecodeRequest(c.Request(), &req); err != nil {
		return err
	}
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	f, err := h.fields(c, tenant, req)
	if err != nil {
		return err
	}
	r, err := risks.New(ids.New(ids.Risk), tenant, f, h.timestamp())
	if err != nil {
		return err
	}
	if err := h.risks.Create(c.Request().Context(), r); err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, c.Request().URL.Path+"/"+r.ID)
	return respond(c, http.StatusCreated, r)
}

// get answers 304 without a body when If-None-Match names the risk's ETag.
func (h handlers) get(c echo.Context) error {
	r, err := h.load(c)
	if err != nil {
		return err
	}
	if fresh, err := notModified(c, r); fresh || err != nil {
		return err
	}
	return respond(c, http.StatusOK, r)
}

func (h handlers) list(c echo.Context) error {
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	params := c.QueryParams()
	q, err := queryOf(params, "limit", "cursor", "sort")
	limit, lerr := route.LimitOf(c)
	if err := problem.Join(err, lerr); err != nil {
		return err
	}
	digest := queryDigest(params)
	after, err := markOf(params.Get("cursor"), q, digest)
	if err != nil {
		return err
	}
	rs, more, err := h.risks.Store.List(c.Request().Context(), tenant, risks.Filter{Query: q, Limit: limit, After: after})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, route.NewPage(rs, more, cursorAfter(q.Sort, digest), riskview.Of))
}

func (h handlers) patch(c echo.Context) error {
	var req riskview.Patch
	if err := jsonbody.DecodeRequest(c.Request(), &req); err != nil {
		return err
	}
	u, nullField, err := req.Update()
	if err != nil {
		return err
	}
	if nullField != "" {
		return problem.Invalid(nullField, "cannot be null")
	}
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	if err := risks.FillOwner(c.Request().Context(), h.risks.Owners, tenant, &u.Owner, u.OwnerUserID); err != nil {
		return err
	}
	return h.update(c, func(r *risks.Risk) error { return r.Apply(u, h.timestamp()) })
}

func (h handlers) replace(c echo.Context) error {
	var req riskview.Write
	if err := jsonbody.DecodeRequest(c.Request(), &req); err != nil {
		return err
	}
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	f, err := h.fields(c, tenant, req)
	if err != nil {
		return err
	}
	return h.update(c, func(r *risks.Risk) error { return r.Replace(f, h.timestamp()) })
}

// fields are a create's or replace's fields, a user owner given its name.
func (h handlers) fields(c echo.Context, tenant string, req riskview.Write) (risks.Fields, error) {
	f, err := req.Fields()
	if err != nil {
		return f, err
	}
	return f, risks.FillOwner(c.Request().Context(), h.risks.Owners, tenant, &f.Owner, f.OwnerUserID)
}

// update reads, checks If-Match, changes and stores the risk named by :id as one
// unit of work.
func (h handlers) update(c echo.Context, change func(*risks.Risk) error) error {
	t, err := h.target(c)
	if err != nil {
		return err
	}
	r, err := h.risks.Update(c.Request().Context(), t.tenant, t.id, t.precondition(), change)
	if err != nil {
		return t.stale(err)
	}
	return respond(c, http.StatusOK, r)
}

func (h handlers) delete(c echo.Context) error {
	t, err := h.target(c)
	if err != nil {
		return err
	}
	if err := h.risks.Delete(c.Request().Context(), t.tenant, t.id, t.precondition()); err != nil {
		return t.stale(err)
	}
	return c.NoContent(http.StatusNoContent)
}

// load returns the tenant's risk named by the :id parameter; another tenant's risk
// is 404 like an absent one.
func (h handlers) load(c echo.Context) (*risks.Risk, error) {
	id := c.Param("id")
	if !ids.Valid(ids.Risk, id) {
		return nil, risks.ErrNotFound
	}
	tenant, err := route.Tenant(c)
	if err != nil {
		return nil, err
	}
	r, err := h.risks.Store.Get(c.Request().Context(), tenant, id)
	if err != nil {
		return nil, err
	}
	return r, nil
}
