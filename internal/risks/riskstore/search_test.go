package riskstore_test

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskseed"
	"github.com/riskapi/riskapi/internal/risks/riskstore"
)

// TestSearchOfCommonWordsFindsEveryMatch: a q search of a word in a fifth of a
// tenant's risks — more than riskstore.DenseMatches, so SQLite pages it by walking
// the sort's index rather than reading the index of words whole — lists exactly the
// risks whose title or description holds the word in any case, non-ASCII text
// included (a Kelvin sign folds to k, as Unicode lowercases it), in order, each
// once across pages, none of another tenant's; and the heat map, which reads the
// matches whole, counts the same risks.
func TestSearchOfCommonWordsFindsEveryMatch(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("seeds 6,500 risks")
	}
	db := dbtest.Open(t)
	ctx := context.Background()
	tenant, err := riskseed.Tenant(ctx, db.DB, "big", 5*riskstore.DenseMatches+500)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := riskseed.Tenant(ctx, db.DB, "other", 500); err != nil {
		t.Fatal(err)
	}
	s := riskstore.New(db.DB, &changeLog{})
	open := risks.StatusOpen
	for _, title := range []string{"Cloud buc\u212Aet", "ÉTÉ bucket", "BUCKET", "Bucke t", "été"} {
		r, err := risks.New(ids.New(ids.Risk), tenant, risks.Fields{Title: str(title), Status: &open,
			Likelihood: num(5), Impact: num(5)}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	q := risks.Query{Statuses: []risks.Status{open}, Sort: risks.Sort{Field: risks.SortRiskScore, Desc: true}}
	var want []*risks.Risk
	for _, r := range pages(t, s, tenant, q) {
		if strings.Contains(strings.ToLower(r.Title+"\n"+r.Description), "bucket") {
			want = append(want, r)
		}
	}
	q.Words = []string{"bucket"}
	got := pages(t, s, tenant, q)
	if len(want) < riskstore.DenseMatches/3 || len(got) != len(want) {
		t.Fatalf("q=bucket listed %d risks, want %d (at least %d)", len(got), len(want), riskstore.DenseMatches/3)
	}
	for i := range want {
		if got[i].ID != want[i].ID {
			t.Fatalf("q=bucket, risk %d is %s %q, want %s %q", i, got[i].ID, got[i].Title, want[i].ID, want[i].Title)
		}
	}
	h, err := s.Heatmap(ctx, tenant, q, risks.BasisInherent)
	if err != nil {
		t.Fatal(err)
	}
	n := h.Unassessed
	for _, row := range h.Counts {
		for _, c := range row {
			n += c
		}
	}
	if n != len(want) {
		t.Errorf("heat map of q=bucket counts %d risks, the list %d", n, len(want))
	}
}

// pages lists every risk q selects, page by page, and checks the order.
func pages(t *testing.T, s *riskstore.Store, tenant string, q risks.Query) []*risks.Risk {
	t.Helper()
	var out []*risks.Risk
	f := risks.Filter{Limit: 97, Query: q}
	for {
		page, more, err := s.List(context.Background(), tenant, f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page...)
		if !more {
			break
		}
		last := page[len(page)-1]
		f.After = &risks.Mark{Key: q.Sort.Key(last), ID: last.ID}
	}
	if !slices.IsSortedFunc(out, func(a, b *risks.Risk) int {
		return cmp.Or(cmp.Compare(*b.RiskScore, *a.RiskScore), strings.Compare(b.ID, a.ID))
	}) {
		t.Fatal("the pages are not in the order -riskScore, -id")
	}
	return out
}
