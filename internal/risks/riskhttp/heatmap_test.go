package riskhttp_test

import (
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
)

// TestHeatmapCountsByHand: each of the 25 cells, and the unassessed, count exactly
// the risks the filters select with that likelihood and impact, for both bases.
func TestHeatmapCountsByHand(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.Tenant("Acme"), env.Tenant("Beta")
	all := register(t, env, a.Key)
	register(t, env, b.Key)
	for _, tt := range []struct {
		query    string
		basis    string
		keep     func(full) bool
		residual bool
	}{
		{"", "inherent", func(full) bool { return true }, false},
		{"?basis=inherent", "inherent", func(full) bool { return true }, false},
		{"?basis=residual", "residual", func(full) bool { return true }, true},
		{"?basis=residual&status=open,closed&q=vendor", "residual", func(r full) bool { return r.Status != "mitigated" && has("vendor", r) }, true},
		{"?basis=residual&likelihood=2,3", "residual", func(r full) bool { return r.Likelihood != nil && (*r.Likelihood == 2 || *r.Likelihood == 3) }, true},
		{"?status=open&metadata%5Bteam%5D=ops", "inherent", func(r full) bool { return r.Status == "open" && r.Metadata["team"] == "ops" }, false},
	} {
		var want [5][5]int
		unassessed := 0
		for _, r := range all {
			if !tt.keep(r) {
				continue
			}
			l, i := r.Likelihood, r.Impact
			if tt.residual {
				l, i = r.ResidualLikelihood, r.ResidualImpact
			}
			if l == nil || i == nil {
				unassessed++
				continue
			}
			want[*l-1][*i-1]++
		}
		var got struct {
			Basis      string
			Cells      []struct{ Likelihood, Impact, Count int }
			Unassessed int
		}
		env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/heatmap" + tt.query, Bearer: a.Key}).
			Expect(http.StatusOK).Decode(&got)
		if got.Basis != tt.basis || got.Unassessed != unassessed || len(got.Cells) != 25 {
			t.Fatalf("%s: basis %q unassessed %d cells %d, want %q %d 25", tt.query, got.Basis, got.Unassessed,
				len(got.Cells), tt.basis, unassessed)
		}
		seen := map[[2]int]bool{}
		total := 0
		for _, c := range got.Cells {
			seen[[2]int{c.Likelihood, c.Impact}] = true
			total += c.Count
			if c.Likelihood < 1 || c.Likelihood > 5 || c.Impact < 1 || c.Impact > 5 || c.Count != want[c.Likelihood-1][c.Impact-1] {
				t.Errorf("%s: cell %d×%d = %d, want %d", tt.query, c.Likelihood, c.Impact, c.Count, want[c.Likelihood-1][c.Impact-1])
			}
		}
		if len(seen) != 25 || total == 0 {
			t.Errorf("%s: %d distinct cells, %d risks counted; want 25 cells and some risks", tt.query, len(seen), total)
		}
	}
	for _, tt := range []struct{ query, param string }{
		{"basis=both", "basis"}, {"sort=title", "sort"}, {"minScore=99", "minScore"}, {"limit=5", "limit"},
	} {
		expectInvalid(t, env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/risks/heatmap?" + tt.query,
			Bearer: apitest.Login(t, env, a).Token}), tt.param)
	}
}
