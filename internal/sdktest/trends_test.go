package sdktest_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	riskapi "github.com/riskapi/riskapi/sdk"
)

// TestTrendsThroughTheSDK: the outsideAppetite filter, the register's trends and a
// risk's score history through the Go SDK against a real server.
func TestTrendsThroughTheSDK(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	srv := httptest.NewServer(env.App.Echo)
	t.Cleanup(srv.Close)
	a := env.Tenant("Acme")
	env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/tenant", Bearer: apitest.Login(t, env, a).Token,
		JSON: map[string]any{"riskAppetite": 8}}).Expect(http.StatusOK)
	c, err := riskapi.NewClient(a.Key, riskapi.WithBaseURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	low, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{Title: "low", Likelihood: riskapi.Ptr(2), Impact: riskapi.Ptr(2)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{Title: "high", Likelihood: riskapi.Ptr(3), Impact: riskapi.Ptr(3)}); err != nil {
		t.Fatal(err)
	}
	outside, err := riskapi.Collect(c.Risks.List(ctx, &riskapi.RiskListParams{RiskFilter: riskapi.RiskFilter{OutsideAppetite: riskapi.Ptr(true)}}))
	if err != nil || len(outside) != 1 || outside[0].Title != "high" {
		t.Fatalf("outside appetite = %v, %v; want high", outside, err)
	}
	if _, err := env.App.Snapshots.Run(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := c.Risks.Trends(ctx, &riskapi.TrendsParams{Interval: "week"})
	if err != nil || len(s.Points) != 1 || s.Points[0].Total != 2 || s.Points[0].OutsideAppetite != 1 ||
		s.Points[0].ByBand["low"] != 1 || s.Points[0].ByBand["medium"] != 1 {
		t.Fatalf("trends = %+v, %v", s, err)
	}
	var bad *riskapi.Error
	if _, err := c.Risks.Trends(ctx, &riskapi.TrendsParams{Interval: "year"}); !errors.As(err, &bad) || bad.Code != "VALIDATION_FAILED" {
		t.Errorf("interval=year: %v, want VALIDATION_FAILED", err)
	}
	if _, err := c.Risks.Update(ctx, low.ID, &riskapi.RiskUpdateParams{Impact: riskapi.Ptr(4)}); err != nil {
		t.Fatal(err)
	}
	h, err := c.Risks.ScoreHistory(ctx, low.ID)
	if err != nil || len(h) != 2 || *h[0].RiskScore != 4 || *h[1].RiskScore != 8 {
		t.Fatalf("score history = %+v, %v; want 4 then 8", h, err)
	}
	// The next day low moves from 2×4 to 2×5: the heat map since that day says so.
	env.Clock.Advance(24 * time.Hour)
	if _, err := c.Risks.Update(ctx, low.ID, &riskapi.RiskUpdateParams{Impact: riskapi.Ptr(5)}); err != nil {
		t.Fatal(err)
	}
	today := env.Clock.Now().UTC().Format("2006-01-02")
	m, err := c.Risks.Heatmap(ctx, &riskapi.RiskHeatmapParams{MovedSince: today})
	if err != nil || m.MovedSince != today || len(m.Moves) != 1 || m.Moves[0].Count != 1 ||
		*m.Moves[0].From != (riskapi.RiskHeatmapPlace{Likelihood: 2, Impact: 4}) ||
		*m.Moves[0].To != (riskapi.RiskHeatmapPlace{Likelihood: 2, Impact: 5}) {
		t.Fatalf("heat map moved since %s = %+v, %v; want one move, 2×4 to 2×5", today, m, err)
	}
}
