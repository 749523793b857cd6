package riskstore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskseed"
	"github.com/riskapi/riskapi/internal/risks/riskstore"
)

// A tenant's q finds its own risks only, through creates, edits of the text and
// deletes, on both stores — whatever another tenant's risks hold.
func TestSearchFindsTheTenantsOwnRisks(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	ctx := context.Background()
	a, err := riskseed.Tenant(ctx, db.DB, "a", 50)
	if err != nil {
		t.Fatal(err)
	}
	b, err := riskseed.Tenant(ctx, db.DB, "b", 50)
	if err != nil {
		t.Fatal(err)
	}
	s := riskstore.New(db.DB, &changeLog{})
	create := func(tenant, title string) *risks.Risk {
		r, err := risks.New(ids.New(ids.Risk), tenant, risks.Fields{Title: str(title)}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	for i := range 30 {
		create(a, fmt.Sprintf("Zqvendor of A %d", i))
	}
	b1, b2 := create(b, "zqvendor of B"), create(b, "nothing yet")
	found := func(tenant string, words ...string) []string {
		t.Helper()
		rs, _, err := s.List(ctx, tenant, risks.Filter{Limit: 100, Query: risks.Query{Words: words, Sort: risks.DefaultSort}})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		slices.Sort(out)
		return out
	}
	if got := found(b, "ZQVENDOR"); !slices.Equal(got, []string{b1.ID}) {
		t.Fatalf("B's search: %v, want only %s", got, b1.ID)
	}
	if got := found(a, "zqvendor"); len(got) != 30 {
		t.Fatalf("A's search: %d risks, want 30", len(got))
	}
	// An edit of the text moves the risk between searches.
	if err := db.Exec("UPDATE risks SET title = ? WHERE id = ?", "now a zqvendor too", b2.ID).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("UPDATE risks SET title = ? WHERE id = ?", "renamed", b1.ID).Error; err != nil {
		t.Fatal(err)
	}
	if got := found(b, "zqvendor"); !slices.Equal(got, []string{b2.ID}) {
		t.Fatalf("B's search after the edits: %v, want only %s", got, b2.ID)
	}
	if err := db.Exec("DELETE FROM risks WHERE id = ?", b2.ID).Error; err != nil {
		t.Fatal(err)
	}
	if got := found(b, "zqvendor"); len(got) != 0 {
		t.Fatalf("B's search after the delete: %v", got)
	}
	if got := found(a, "zqvendor", "of"); len(got) != 30 {
		t.Fatalf("A's search after B's edits: %d risks, want 30", len(got))
	}
}

// BenchmarkSearchBesideABigTenant measures one tenant's q (200 risks, 5 matching)
// alone and beside another tenant of 100,000 risks that all hold the word: on
// SQLite the search index answers from the tenant's own entries (migration
// 0017_search_per_tenant), so the two should cost about the same.
func BenchmarkSearchBesideABigTenant(b *testing.B) {
	for _, others := range []int{0, 100_000} {
		b.Run(fmt.Sprintf("others=%d", others), func(b *testing.B) {
			db := dbtest.Open(b)
			ctx := context.Background()
			if others > 0 {
				big, err := riskseed.Tenant(ctx, db.DB, "big", others)
				if err != nil {
					b.Fatal(err)
				}
				if err := db.Exec("UPDATE risks SET title = title || ' zqword' WHERE tenant_id = ?", big).Error; err != nil {
					b.Fatal(err)
				}
			}
			small, err := riskseed.Tenant(ctx, db.DB, "small", 200)
			if err != nil {
				b.Fatal(err)
			}
			if err := db.Exec(`UPDATE risks SET title = title || ' zqword' WHERE id IN
				(SELECT id FROM risks WHERE tenant_id = ? ORDER BY id LIMIT 5)`, small).Error; err != nil {
				b.Fatal(err)
			}
			s := riskstore.New(db.DB, &changeLog{})
			q := risks.Filter{Limit: 20, Query: risks.Query{Words: []string{"zqword"}, Sort: risks.Sort{Field: risks.SortTitle}}}
			b.ResetTimer()
			for range b.N {
				rs, _, err := s.List(ctx, small, q)
				if err != nil || len(rs) != 5 {
					b.Fatalf("%d risks, %v", len(rs), err)
				}
			}
		})
	}
}
