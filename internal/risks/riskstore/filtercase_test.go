package riskstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskseed"
	"github.com/riskapi/riskapi/internal/risks/riskstore"
)

// TestCategoryAndOwnerFiltersIgnoreCase: category= and owner= select the risks
// whose whole value matches in any letter case (a user filtering on "operations"
// found none of the "Operations" risks), still never a longer value, and owner=
// still selects the risks without an owner; the heat map counts the same risks.
func TestCategoryAndOwnerFiltersIgnoreCase(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	ctx := context.Background()
	tenant, err := riskseed.Tenant(ctx, db.DB, "case", 0)
	if err != nil {
		t.Fatal(err)
	}
	s := riskstore.New(db.DB, &changeLog{})
	for _, r := range []struct{ title, category, owner string }{
		{"a", "Operations", "Ada Lovelace"},
		{"b", "OPERATIONS", "ada lovelace"},
		{"c", "operations center", "Ada Lovelace-Byron"},
		{"d", "Finance", ""},
	} {
		risk, err := risks.New(ids.New(ids.Risk), tenant,
			risks.Fields{Title: str(r.title), Category: str(r.category), Owner: str(r.owner), Likelihood: num(2), Impact: num(3)}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Create(ctx, risk); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		q    risks.Query
		want []string
	}{
		{"category, lower case", risks.Query{Category: str("operations")}, []string{"a", "b"}},
		{"category, mixed case", risks.Query{Category: str("oPeRaTiOnS")}, []string{"a", "b"}},
		{"owner, upper case", risks.Query{Owner: str("ADA LOVELACE")}, []string{"a", "b"}},
		{"owner none", risks.Query{Owner: str("")}, []string{"d"}},
		{"both", risks.Query{Category: str("finance"), Owner: str("")}, []string{"d"}},
	} {
		var got []string
		for _, r := range pages(t, s, tenant, c.q) {
			got = append(got, r.Title)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
		m, err := s.Heatmap(ctx, tenant, c.q, risks.BasisInherent)
		if err != nil {
			t.Fatal(err)
		}
		n := m.Unassessed
		for _, row := range m.Counts {
			for _, count := range row {
				n += count
			}
		}
		if n != len(c.want) {
			t.Errorf("%s: the heat map counts %d risks, the list %d", c.name, n, len(c.want))
		}
	}
}
