package riskhttp

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/route"
)

// heatmapCell is one cell of the 5×5 grid (docs/openapi.yaml, Heatmap).
type heatmapCell struct {
	Likelihood int `json:"likelihood"`
	Impact     int `json:"impact"`
	Count      int `json:"count"`
}

// heatmapBody is the heat map's answer: all 25 cells, likelihood-major, and the
// selected risks that lack one or both factors of the basis; with movedSince, the
// moves of the selected risks since that day began (UTC).
type heatmapBody struct {
	Basis      risks.Basis   `json:"basis"`
	Cells      []heatmapCell `json:"cells"`
	Unassessed int           `json:"unassessed"`
	MovedSince string        `json:"movedSince,omitempty"`
	Moves      []risks.Move  `json:"moves,omitempty"`
}

// heatmap counts the risks the list's filters select by likelihood × impact, of
// the inherent (default) or residual assessment.
func (h handlers) heatmap(c echo.Context) error {
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	extra := []string{"basis"}
	if h.past != nil {
		extra = append(extra, "movedSince")
	}
	q, err := queryOf(c.QueryParams(), extra...)
	basis := risks.Basis(c.QueryParam("basis"))
	var berr error
	switch basis {
	case "":
		basis = risks.BasisInherent
	case risks.BasisInherent, risks.BasisResidual:
	default:
		berr = problem.Invalid("basis", "must be inherent or residual")
	}
	since, serr := h.movedSince(c.QueryParams())
	if err := problem.Join(err, berr, serr); err != nil {
		return err
	}
	m, err := h.risks.Store.Heatmap(c.Request().Context(), tenant, q, basis)
	if err != nil {
		return err
	}
	body := heatmapBody{Basis: basis, Cells: make([]heatmapCell, 0, 25), Unassessed: m.Unassessed}
	for l := range 5 {
		for i := range 5 {
			body.Cells = append(body.Cells, heatmapCell{Likelihood: l + 1, Impact: i + 1, Count: m.Counts[l][i]})
		}
	}
	if since != nil {
		body.MovedSince = since.Format(time.DateOnly)
		if body.Moves, err = h.moves(c.Request().Context(), tenant, q, basis, *since); err != nil {
			return err
		}
	}
	return c.JSON(http.StatusOK, body)
}

// movedSince reads movedSince (YYYY-MM-DD, UTC): from the oldest day whose audit
// entries are all kept (AUDIT_LOG_TTL) to today. Absent: nil.
func (h handlers) movedSince(params url.Values) (*time.Time, error) {
	v, ok := params["movedSince"]
	if !ok || h.past == nil {
		return nil, nil
	}
	d, err := time.Parse(time.DateOnly, v[0])
	if err != nil {
		return nil, problem.Invalid("movedSince", "must be a date YYYY-MM-DD")
	}
	now := h.now().UTC()
	if d.After(now) {
		return nil, problem.Invalid("movedSince", "must not be after today (UTC)")
	}
	if d.Before(now.Add(-h.auditLogTTL)) {
		return nil, problem.Invalid("movedSince", "must be within the audit log's retention (AUDIT_LOG_TTL), since "+
			now.Add(-h.auditLogTTL).AddDate(0, 0, 1).Format(time.DateOnly))
	}
	return &d, nil
}

// moves counts where the risks q selects moved from since since (docs/register.md,
// "Moved since"): the audit log says which risks changed the basis' factors since
// and what they were then (at most trends.MaxMoveEntries entries); the risks table
// says where those of them q selects are now.
func (h handlers) moves(ctx context.Context, tenant string, q risks.Query, basis risks.Basis, since time.Time) ([]risks.Move, error) {
	past, ok, err := h.past.Past(ctx, tenant, since, basis)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, problem.Invalid("movedSince", "too many changes since this date to count: choose a later date")
	}
	moved := make([]string, 0, len(past))
	for id := range past {
		moved = append(moved, id)
	}
	slices.Sort(moved)
	now, err := h.risks.Store.Factors(ctx, tenant, q, basis, moved)
	if err != nil {
		return nil, err
	}
	return risks.MovesOf(past, now), nil
}
