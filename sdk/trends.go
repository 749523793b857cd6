package riskapi

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// TrendsParams selects a series of the register's daily snapshots (GET
// /v2/register/trends). Zero fields are not sent: the server's defaults are the 90
// days to today, by day.
type TrendsParams struct {
	Params
	// From and To (YYYY-MM-DD, UTC) bound the series' days, inclusive.
	From, To string
	// Interval is "day", "week" (ISO) or "month".
	Interval string
}

// TrendCounts is the register on one day.
type TrendCounts struct {
	Total int `json:"total"`
	// ByStatus counts risks by status; ByTreatment by treatment ("none" for
	// none); ByBand by riskScore band: low 1–4, medium 5–9, high 10–16, critical
	// 17–25, and "unscored".
	ByStatus        map[string]int `json:"byStatus"`
	ByTreatment     map[string]int `json:"byTreatment"`
	ByBand          map[string]int `json:"byBand"`
	OutsideAppetite int            `json:"outsideAppetite"`
	ReviewsOverdue  int            `json:"reviewsOverdue"`
	ActionsOverdue  int            `json:"actionsOverdue"`
}

// TrendPoint is one step of a series [From, To]: the counts of its last snapshot,
// taken on Day at TakenAt.
type TrendPoint struct {
	From    string    `json:"from"`
	To      string    `json:"to"`
	Day     string    `json:"day"`
	TakenAt time.Time `json:"takenAt"`
	TrendCounts
}

// TrendSeries is the register over time. A step the server did not run in has no
// point: Points may have gaps.
type TrendSeries struct {
	From     string       `json:"from"`
	To       string       `json:"to"`
	Interval string       `json:"interval"`
	Points   []TrendPoint `json:"points"`
	// LastResponse describes the HTTP exchange.
	LastResponse *APIResponse `json:"-"`
}

// Trends returns the register's series of daily snapshots (GET
// /v2/register/trends). p may be nil.
//
// Errors: *Error with 400 VALIDATION_FAILED naming a bad parameter.
func (s *RisksService) Trends(ctx context.Context, p *TrendsParams) (*TrendSeries, error) {
	if p == nil {
		p = &TrendsParams{}
	}
	q := url.Values{}
	for name, v := range map[string]string{"from": p.From, "to": p.To, "interval": p.Interval} {
		if v != "" {
			q.Set(name, v)
		}
	}
	out := new(TrendSeries)
	info, err := s.client.doJSON(ctx, http.MethodGet, "/v2/register/trends", q, &p.Params, nil, out)
	if err != nil {
		return nil, err
	}
	out.LastResponse = info
	return out, nil
}

// ScorePoint is a risk's scores from At on.
type ScorePoint struct {
	At            time.Time `json:"at"`
	RiskScore     *int      `json:"riskScore"`
	ResidualScore *int      `json:"residualScore"`
}

// ScoreHistory returns a risk's score history, oldest first (GET
// /v2/risks/{id}/score-history), from its audit entries: at most the newest 500
// points.
//
// Errors: *Error with 404 NOT_FOUND for a risk the tenant never had.
func (s *RisksService) ScoreHistory(ctx context.Context, riskID string) ([]ScorePoint, error) {
	var out struct {
		Data []ScorePoint `json:"data"`
	}
	if _, err := s.client.doJSON(ctx, http.MethodGet, "/v2/risks/"+url.PathEscape(riskID)+"/score-history", nil, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}
