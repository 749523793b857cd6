// Package trendshttp is the HTTP adapter of the register in time (docs/register.md,
// Trends): the series of a tenant's daily snapshots, and a risk's score history.
package trendshttp

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/route"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/trends"
)

// Config wires the handlers.
type Config struct {
	Store *trends.Store    // required
	Now   func() time.Time // optional, default time.Now
}

type handlers struct{ Config }

// Routes declares GET /register/trends and GET /risks/{id}/score-history, under
// /v1 and /v2 (scope risks:read).
func Routes(cfg Config) []route.Route {
	h := handlers{cfg}
	return []route.Route{
		{Method: http.MethodGet, Path: "/register/trends", Handler: h.series, Versions: route.Both, Scope: tenants.ScopeRisksRead},
		{Method: http.MethodGet, Path: "/risks/:id/score-history", Handler: h.scoreHistory, Versions: route.Both,
			Scope: tenants.ScopeRisksRead},
	}
}

// seriesResponse is GET /register/trends.
type seriesResponse struct {
	From     string          `json:"from"`
	To       string          `json:"to"`
	Interval trends.Interval `json:"interval"`
	Points   []trends.Point  `json:"points"`
}

func (h handlers) series(c echo.Context) error {
	params := c.QueryParams()
	for name, vs := range params {
		if name != "from" && name != "to" && name != "interval" {
			return problem.Invalid(name, "is not a parameter of this route")
		}
		if len(vs) > 1 {
			return problem.Invalid(name, "is given more than once")
		}
	}
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	y, m, d := now().UTC().Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	r, err := trends.ParseRange(params.Get("from"), params.Get("to"), params.Get("interval"), today)
	if err != nil {
		return err
	}
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	from, to := r.From.Format(trends.DateLayout), r.To.Format(trends.DateLayout)
	snaps, err := h.Store.Snapshots(c.Request().Context(), tenant, from, to)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, seriesResponse{From: from, To: to, Interval: r.Interval, Points: r.Series(snaps)})
}

// historyResponse is GET /risks/{id}/score-history.
type historyResponse struct {
	Data []trends.ScorePoint `json:"data"`
}

func (h handlers) scoreHistory(c echo.Context) error {
	id := c.Param("id")
	if !ids.Valid(ids.Risk, id) {
		return risks.ErrNotFound
	}
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	ps, found, err := h.Store.ScoreHistory(c.Request().Context(), tenant, id)
	if err != nil {
		return err
	}
	if !found {
		return risks.ErrNotFound
	}
	return c.JSON(http.StatusOK, historyResponse{Data: ps})
}
