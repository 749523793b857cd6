// Package riskseed fills a store with synthetic risks for the register's benchmarks
// (docs/performance.md, "The register at size"): millions of rows in minutes, by
// multi-row INSERTs in large transactions rather than one write per risk. The rows
// bypass the risk store, so they record no events or audit entries: they stand for
// risks stored long ago.
package riskseed

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/ids"
)

// Titles are the words a seeded title starts with, one per row in turn: the first
// ("vendor contract") is in a fifth of the rows, which q benchmarks search for.
var Titles = []string{"vendor contract", "backup restore", "access review", "cloud bucket", "phishing"}

var (
	statuses   = []string{"open", "mitigated", "closed"}
	treatments = []string{"accept", "mitigate", "transfer", "avoid"}
	categories = []string{"security", "privacy", "vendor", "operations", "finance", "legal", "people"}
)

// columns are those every seeded row sets, in the order values writes them.
var columns = []string{"id", "tenant_id", "title", "description", "category", "likelihood", "impact",
	"risk_score", "status", "owner", "version", "treatment", "review_date", "residual_likelihood",
	"residual_impact", "residual_score", "metadata", "created_at", "updated_at"}

// Base is the creation time of a tenant's row 0; row i is created i seconds later.
var Base = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// perTransaction is how many rows one commit holds: few fsyncs, a bounded WAL per
// transaction. Rows per INSERT are database.BatchRows: 52 on SQLite, whose driver
// binds parameters in quadratic time (500 rows, 9,500 parameters, made seeding
// several times slower), 1,000 on PostgreSQL.
const perTransaction = 50_000

// Tenant inserts a tenant named name and n risks of it, and returns its id. Row i
// has likelihood 1+i%5 and impact 1+(i/5)%5 (so each of the 25 cells holds n/25
// rows), status open, mitigated and closed in turn, a treatment on four rows in
// five, a review date in 2025, a residual assessment on half of them, metadata on
// one in ten; its title is Titles[i%5] and the row number.
func Tenant(ctx context.Context, db *gorm.DB, name string, n int) (string, error) {
	tenant := ids.New(ids.Tenant)
	if err := db.WithContext(ctx).Exec("INSERT INTO tenants (id, name, created_at) VALUES (?, ?, ?)",
		tenant, name, time.Now().UTC()).Error; err != nil {
		return "", fmt.Errorf("seed tenant: %w", err)
	}
	return tenant, Risks(ctx, db, tenant, 0, n)
}

// Risks inserts rows from..to-1 (numbered as Tenant says) of tenant's risks.
func Risks(ctx context.Context, db *gorm.DB, tenant string, from, to int) error {
	for start := from; start < to; start += perTransaction {
		end := min(start+perTransaction, to)
		per := database.BatchRows(db, len(columns))
		err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			for s := start; s < end; s += per {
				e := min(s+per, end)
				if err := tx.Exec(statement(e-s), values(tenant, s, e)...).Error; err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("seed risks %d–%d: %w", start, end, err)
		}
	}
	return nil
}

// statement is one INSERT of n rows.
func statement(n int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", len(columns)), ",") + ")"
	return "INSERT INTO risks (" + strings.Join(columns, ", ") + ") VALUES " +
		strings.TrimSuffix(strings.Repeat(row+",", n), ",")
}

// values are rows from..to-1's values, in columns' order.
func values(tenant string, from, to int) []any {
	out := make([]any, 0, (to-from)*len(columns))
	for i := from; i < to; i++ {
		l, im := 1+i%5, 1+(i/5)%5
		var treatment, rl, ri, rs any
		if i%5 != 0 {
			treatment = treatments[i%4]
		}
		if i%2 == 0 {
			a, b := 1+(i/25)%5, 1+(i/125)%5
			rl, ri, rs = a, b, a*b
		}
		metadata := "{}"
		if i%10 == 0 {
			metadata = fmt.Sprintf(`{"unit":"u%d"}`, i%100)
		}
		at := Base.Add(time.Duration(i) * time.Second)
		out = append(out, ids.New(ids.Risk), tenant, fmt.Sprintf("%s %d", Titles[i%len(Titles)], i),
			fmt.Sprintf("seeded row %d of the register benchmark", i), categories[i%len(categories)],
			l, im, l*im, statuses[i%3], fmt.Sprintf("owner%d@example.com", i%13), 1, treatment,
			Base.AddDate(1, 0, i%365).Format("2006-01-02"), rl, ri, rs, metadata, at, at)
	}
	return out
}
