package riskstore

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/risks"
)

type discard struct{}

func (discard) Record(context.Context, changes.Change) error { return nil }

// BenchmarkRegisterQueries measures the register's reads on a tenant of
// REGISTER_BENCH_ROWS risks (default 100,000) beside two tenants of a tenth as many,
// 4 clients at once: a filtered list sorted by score, a q search, and the heat map.
// It reports the p99 of each call besides the mean (docs/performance.md).
func BenchmarkRegisterQueries(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("REGISTER_BENCH_ROWS")); err == nil && v > 0 {
		n = v
	}
	db := dbtest.Open(b)
	s := New(db.DB, discard{})
	ctx := context.Background()
	tenant := seed(b, s, n)
	seed(b, s, n/10)
	seed(b, s, n/10)
	// As autovacuum would by now on PostgreSQL (sqlite_stat1 on SQLite).
	if err := s.db.Exec("ANALYZE").Error; err != nil {
		b.Fatal(err)
	}
	open, ten := []risks.Status{risks.StatusOpen}, 10
	for name, call := range map[string]func() error{
		"list_filtered_by_score": func() error {
			_, _, err := s.List(ctx, tenant, risks.Filter{Limit: 20, Query: risks.Query{Statuses: open, MinScore: &ten,
				Sort: risks.Sort{Field: risks.SortRiskScore, Desc: true}}})
			return err
		},
		"search_q": func() error {
			_, _, err := s.List(ctx, tenant, risks.Filter{Limit: 20, Query: risks.Query{Words: []string{"vendor", "contract"},
				Sort: risks.DefaultSort}})
			return err
		},
		"heatmap": func() error {
			_, err := s.Heatmap(ctx, tenant, risks.Query{Statuses: open}, risks.BasisInherent)
			return err
		},
	} {
		b.Run(name, func(b *testing.B) {
			var mu sync.Mutex
			var took []time.Duration
			b.SetParallelism(2) // 4 clients on the 2 CPUs of docs/performance.md
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					start := time.Now()
					if err := call(); err != nil {
						b.Error(err)
						return
					}
					mu.Lock()
					took = append(took, time.Since(start))
					mu.Unlock()
				}
			})
			slices.Sort(took)
			if len(took) > 0 {
				b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
			}
		})
	}
}

// seed stores n risks of a new tenant in batches and returns the tenant.
func seed(b *testing.B, s *Store, n int) string {
	b.Helper()
	tenant := ids.New(ids.Tenant)
	if err := s.db.Exec("INSERT INTO tenants (id, name, created_at) VALUES (?, ?, ?)", tenant, "bench", time.Now()).Error; err != nil {
		b.Fatal(err)
	}
	words := []string{"vendor contract", "backup restore", "access review", "cloud bucket", "phishing"}
	statuses := []risks.Status{risks.StatusOpen, risks.StatusMitigated, risks.StatusClosed}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	batch := make([]*row, 0, 1000)
	for i := range n {
		l, im := 1+i%5, 1+(i/5)%5
		title := fmt.Sprintf("%s %d", words[i%len(words)], i)
		r, err := risks.New(ids.New(ids.Risk), tenant, risks.Fields{Title: &title, Likelihood: &l, Impact: &im,
			Status: &statuses[i%3]}, base.Add(time.Duration(i)*time.Second))
		if err != nil {
			b.Fatal(err)
		}
		batch = append(batch, toRow(r))
		if len(batch) == cap(batch) || i == n-1 {
			if err := s.db.CreateInBatches(batch, 200).Error; err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	return tenant
}
