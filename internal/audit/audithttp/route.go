// Package audithttp is the HTTP adapter of the audit log (docs/audit-log.md): the
// tenant's entries, newest first, for its administrators (/v1) and API keys with
// scope audit:read (/v2); their streamed export; and a risk's history (scope
// risks:read), oldest first, kept after the risk is deleted. Nothing here writes:
// entries are never changed or deleted through any route.
package audithttp

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/audit"
	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/route"
	"github.com/riskapi/riskapi/internal/tenants"
)

// Config wires the handlers.
type Config struct {
	// Store reads entries. Required.
	Store audit.Store
}

type handlers struct{ Config }

// Routes declares the audit-log routes. The log and its export are /v1 for
// administrators and /v2 for keys with audit:read: one handler, two policies.
func Routes(cfg Config) []route.Route {
	h := handlers{cfg}
	read := tenants.ScopeAuditRead
	return []route.Route{
		{Method: http.MethodGet, Path: "/audit-log", Handler: h.list, Versions: route.V1, Admin: true},
		{Method: http.MethodGet, Path: "/audit-log", Handler: h.list, Versions: route.V2, Scope: read},
		{Method: http.MethodGet, Path: "/audit-log/export", Handler: h.export, Versions: route.V1, Admin: true,
			Costly: route.AlwaysCostly},
		{Method: http.MethodGet, Path: "/audit-log/export", Handler: h.export, Versions: route.V2, Scope: read,
			Costly: route.AlwaysCostly},
		{Method: http.MethodGet, Path: "/risks/:id/history", Handler: h.history, Versions: route.Both,
			Scope: tenants.ScopeRisksRead},
	}
}

func (h handlers) list(c echo.Context) error {
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	p, err := route.PagingOf(c, ids.Audit)
	if err != nil {
		return err
	}
	f, err := filterOf(c)
	if err != nil {
		return err
	}
	f.Limit, f.After = p.Limit, p.After
	es, more, err := h.Store.List(c.Request().Context(), tenant, f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, route.NewPage(es, more, func(e *audit.Entry) string { return e.ID }, viewOf))
}

// history lists the risk's entries oldest first, with those of its attachments'
// uploads and deletions (audit.Filter.RiskID). The risk need not exist any more:
// its entries outlive it. A risk ID with no entries is 404, like an unknown risk.
// Anyone who reads risks reads their history, but the client address and user
// agent of each change only those who may read the audit log (docs/audit-log.md).
func (h handlers) history(c echo.Context) error {
	p, err := route.Principal(c)
	if err != nil {
		return err
	}
	tenant := p.Scope
	id := c.Param("id")
	if !ids.Valid(ids.Risk, id) {
		return risks.ErrNotFound
	}
	pg, err := route.PagingOf(c, ids.Audit)
	if err != nil {
		return err
	}
	f := audit.Filter{RiskID: id, OldestFirst: true, After: pg.After, Limit: pg.Limit}
	es, more, err := h.Store.List(c.Request().Context(), tenant, f)
	if err != nil {
		return err
	}
	if len(es) == 0 && pg.After == "" {
		return risks.ErrNotFound
	}
	show := viewOf
	if !p.Admin() && !(p.Kind == auth.KindAPIKey && p.Has(tenants.ScopeAuditRead)) {
		show = func(e *audit.Entry) entryView {
			v := viewOf(e)
			v.IP, v.UserAgent = nil, nil
			return v
		}
	}
	return c.JSON(http.StatusOK, route.NewPage(es, more, func(e *audit.Entry) string { return e.ID }, show))
}

// filterOf parses the filters the log and its export share. Errors: 400
// VALIDATION_FAILED naming action, actorId, targetId, since or until.
func filterOf(c echo.Context) (audit.Filter, error) {
	var f audit.Filter
	if a := c.QueryParam("action"); a != "" {
		if !slices.Contains(audit.Actions, a) {
			return f, problem.Invalid("action", "must be one of "+strings.Join(audit.Actions, ", "))
		}
		f.Action = a
	}
	for _, q := range []struct {
		name string
		dst  *string
	}{{"actorId", &f.ActorID}, {"targetId", &f.TargetID}} {
		v := c.QueryParam(q.name)
		if len(v) > 100 {
			return f, problem.Invalid(q.name, "must be at most 100 characters")
		}
		*q.dst = v
	}
	for _, q := range []struct {
		name string
		dst  *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		if v := c.QueryParam(q.name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return f, problem.Invalid(q.name, "must be an RFC 3339 date-time such as 2026-01-31T00:00:00Z")
			}
			*q.dst = t
		}
	}
	return f, nil
}
