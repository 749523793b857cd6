package riskhttp

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/route"
)

// Which register reads take a slot of the tenant's costly reads (docs/register.md,
// "Costly reads"): those no index answers, never a plain page or a counted heat map.
func TestCostlyReads(t *testing.T) {
	t.Parallel()
	routes := map[string]func(echo.Context) bool{}
	for _, r := range Routes(Config{MaxImportRows: 1}) {
		if r.Method == http.MethodGet {
			routes[r.Path] = r.Costly
		}
	}
	cases := []struct {
		path, query string
		costly      bool
	}{
		{"/risks", "", false},
		{"/risks", "limit=100&sort=-updatedAt", false},
		{"/risks", "status=open,accepted&treatment=mitigate", false},
		{"/risks", "likelihood=5&impact=4,5", false},
		{"/risks", "minScore=10&sort=riskScore", false},
		{"/risks", "createdSince=2026-01-01T00:00:00Z", false},
		{"/risks", "reviewBefore=2026-01-01&sort=-reviewDate", false},
		{"/risks", "q=zq&sort=title", true},
		{"/risks", "q=vendor", true},
		{"/risks", "category=none&sort=title", true},
		{"/risks", "owner=alice", true},
		{"/risks", "metadata[team]=x", true},
		{"/risks", "minScore=1&sort=title", true},
		{"/risks", "updatedSince=2026-01-01T00:00:00Z", true},
		{"/risks", "q=", false},                // no words
		{"/risks", "sort=nonsense&q=x", false}, // refused by the handler, never run
		{"/risks/heatmap", "", false},
		{"/risks/heatmap", "status=open&basis=residual&likelihood=3", false},
		{"/risks/heatmap", "category=x", true},
		{"/risks/heatmap", "owner=bob", true},
		{"/risks/heatmap", "minScore=1", true},
		{"/risks/heatmap", "q=vendor", true},
		{"/risks/heatmap", "movedSince=2026-01-01", true},
		{"/risks/export", "", true},
		{"/risks/:id", "", false},
	}
	e := echo.New()
	for _, tc := range cases {
		c := e.NewContext(httptest.NewRequest(http.MethodGet, tc.path+"?"+tc.query, nil), httptest.NewRecorder())
		costly, declared := routes[tc.path]
		got := declared && costly != nil && costly(c)
		if got != tc.costly {
			t.Errorf("GET %s?%s: costly %v, want %v", tc.path, tc.query, got, tc.costly)
		}
	}
	if routes["/risks/export"] == nil || !route.AlwaysCostly(nil) {
		t.Error("the export is not declared costly")
	}
}
