package riskstore_test

import (
	"cmp"
	"context"
	"fmt"
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
// tenant's risks, and of a rare one, lists exactly the risks whose title or
// description holds the word in any case, non-ASCII text included (a Kelvin sign
// folds to k, as Unicode lowercases it), in order, each once across pages, none of
// another tenant's — under each sort, NULL keys included, whichever way SQLite
// reads a page: a walk of the sort's index that ends within the tenant (window of
// 2,000 rows), one that reaches its end (100,000), or the set of matches when the
// walk finds less than a page (300; and 400 risks without a score put a window's end
// at a NULL key). The heat map, which reads the matches whole, counts the same risks.
func TestSearchOfCommonWordsFindsEveryMatch(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("seeds 7,000 risks")
	}
	db := dbtest.Open(t)
	ctx := context.Background()
	tenant, err := riskseed.Tenant(ctx, db.DB, "big", 5500)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := riskseed.Tenant(ctx, db.DB, "other", 500); err != nil {
		t.Fatal(err)
	}
	base := riskstore.New(db.DB, &changeLog{})
	open := risks.StatusOpen
	titles := []string{"Cloud buc\u212Aet", "ÉTÉ bucket", "BUCKET", "Bucke t", "été"}
	for i := range 400 {
		titles = append(titles, fmt.Sprintf("unscored %d", i))
		if i%4 == 0 {
			titles[len(titles)-1] += " bucket"
		}
	}
	for i, title := range titles {
		f := risks.Fields{Title: str(title), Status: &open}
		if i < 5 {
			f.Likelihood, f.Impact = num(5), num(5)
		}
		r, err := risks.New(ids.New(ids.Risk), tenant, f, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := base.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	sorts := []risks.Sort{{Field: risks.SortRiskScore, Desc: true}, {Field: risks.SortCreatedAt},
		{Field: risks.SortTitle, Desc: true}, {Field: risks.SortRiskScore}}
	for _, word := range []string{"bucket", "4320"} {
		for _, sort := range sorts {
			q := risks.Query{Statuses: []risks.Status{open}, Sort: sort}
			var want []*risks.Risk
			for _, r := range pages(t, base, tenant, q) {
				if strings.Contains(strings.ToLower(r.Title+"\n"+r.Description), word) {
					want = append(want, r)
				}
			}
			if word == "bucket" && len(want) < 400 || len(want) == 0 {
				t.Fatalf("only %d risks of %q to find", len(want), word)
			}
			q.Words = []string{word}
			for _, window := range []int{300, 2000, 100_000} {
				got := pages(t, riskstore.WalkingAt(base, window), tenant, q)
				if len(got) != len(want) {
					t.Fatalf("q=%q sort %+v window %d listed %d risks, want %d", word, sort, window, len(got), len(want))
				}
				for i := range want {
					if got[i].ID != want[i].ID {
						t.Fatalf("q=%q sort %+v window %d, risk %d is %s %q, want %s %q", word, sort, window,
							i, got[i].ID, got[i].Title, want[i].ID, want[i].Title)
					}
				}
			}
			if sort != sorts[0] {
				continue
			}
			h, err := base.Heatmap(ctx, tenant, q, risks.BasisInherent)
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
				t.Errorf("heat map of q=%q counts %d risks, the list %d", word, n, len(want))
			}
		}
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
	if !slices.IsSortedFunc(out, func(a, b *risks.Risk) int { return order(q.Sort, a, b) }) {
		t.Fatalf("the pages are not in the order %+v", q.Sort)
	}
	return out
}

// order compares a and b as sort lists them: by its key, NULL keys last, then by ID.
func order(sort risks.Sort, a, b *risks.Risk) int {
	var c int
	switch ka, kb := sort.Key(a), sort.Key(b); {
	case ka == nil || kb == nil:
		if ka != nil {
			return -1
		}
		if kb != nil {
			return 1
		}
	default:
		switch x := ka.(type) {
		case int:
			c = cmp.Compare(x, kb.(int))
		case string:
			c = strings.Compare(x, kb.(string))
		case time.Time:
			c = x.Compare(kb.(time.Time))
		}
	}
	c = cmp.Or(c, strings.Compare(a.ID, b.ID))
	if sort.Desc {
		return -c
	}
	return c
}
