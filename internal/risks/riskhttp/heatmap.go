package riskhttp

import (
	"net/http"

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
// selected risks that lack one or both factors of the basis.
type heatmapBody struct {
	Basis      risks.Basis   `json:"basis"`
	Cells      []heatmapCell `json:"cells"`
	Unassessed int           `json:"unassessed"`
}

// heatmap counts the risks the list's filters select by likelihood × impact, of
// the inherent (default) or residual assessment.
func (h handlers) heatmap(c echo.Context) error {
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	q, err := queryOf(c.QueryParams(), "basis")
	basis := risks.Basis(c.QueryParam("basis"))
	var berr error
	switch basis {
	case "":
		basis = risks.BasisInherent
	case risks.BasisInherent, risks.BasisResidual:
	default:
		berr = problem.Invalid("basis", "must be inherent or residual")
	}
	if err := problem.Join(err, berr); err != nil {
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
	return c.JSON(http.StatusOK, body)
}
