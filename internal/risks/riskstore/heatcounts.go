package riskstore

import (
	"context"
	"fmt"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/risks"
)

// The heat map's counts (migration 0016, docs/performance.md "The register at
// size"): risk_heat_counts holds, per tenant, how many risks have each status,
// treatment ('' for none) and both assessments (0 for a missing value). Triggers on
// risks keep it in the transaction of every statement that writes a risk, so a
// rolled-back write leaves it as it was, and no path around the store can miss it.
// On PostgreSQL each write inserts delta rows (+1/−1) that FoldHeatCounts folds
// later; on SQLite the triggers add to the folded row in place. Reads sum.

// countable reports whether the counts can answer a heat map of q
// (risks.Query.Counted, which also decides that a heat map is a costly read).
func countable(q risks.Query) bool { return q.Counted() }

// countedHeatmap sums the tenant's rows of risk_heat_counts for q's statuses and
// treatments by the cell of basis: one statement over at most a few thousand rows
// (one per status, treatment and pair of assessments the tenant has, plus the
// deltas not yet folded), read through idx_risk_heat_counts_tenant.
func (s *Store) countedHeatmap(ctx context.Context, tenantID string, q risks.Query, basis risks.Basis) (*risks.Heatmap, error) {
	l, i := "likelihood", "impact"
	if basis == risks.BasisResidual {
		l, i = "residual_likelihood", "residual_impact"
	}
	db := database.Conn(ctx, s.db).Table("risk_heat_counts").Scopes(database.OfTenant(tenantID))
	if len(q.Statuses) > 0 {
		db = db.Where("status IN ?", q.Statuses)
	}
	if len(q.Treatments) > 0 {
		db = db.Where("treatment IN ?", q.Treatments)
	}
	// The counts keep the four factors under the risks' column names (0 for none).
	db = whereFactors(db, q, "")
	var cells []cell
	err := db.Select(l + " AS l, " + i + " AS i, SUM(n) AS n").Group(l + ", " + i).Scan(&cells).Error
	if err != nil {
		return nil, fmt.Errorf("risk heat map: %w", err)
	}
	return heatmapOf(cells), nil
}

// FoldHeatCounts folds up to limit of the oldest delta rows of risk_heat_counts
// into the folded row of their key, in one statement (one transaction), and returns
// how many deltas it folded. Readers see the counts before or after, never between;
// writers, which only insert deltas, never wait on it. Concurrent folds take
// disjoint deltas (SKIP LOCKED) and add to the folded rows in key order, so they
// queue on a shared key rather than deadlock. The sweep runs it in batches
// (internal/app). On SQLite there are no deltas (the triggers fold in place): it
// returns 0 without a statement.
func (s *Store) FoldHeatCounts(ctx context.Context, limit int) (int, error) {
	if !s.postgres() {
		return 0, nil
	}
	var n int
	err := database.Conn(ctx, s.db).Raw(`WITH picked AS (
			SELECT id FROM risk_heat_counts WHERE NOT folded ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED),
		gone AS (
			DELETE FROM risk_heat_counts c USING picked WHERE c.id = picked.id
			RETURNING c.tenant_id, c.status, c.treatment, c.likelihood, c.impact,
				c.residual_likelihood, c.residual_impact, c.n),
		-- Run to completion though nothing reads it, as every data-modifying WITH is.
		added AS (
			INSERT INTO risk_heat_counts (tenant_id, status, treatment, likelihood, impact,
				residual_likelihood, residual_impact, n, folded)
			SELECT tenant_id, status, treatment, likelihood, impact, residual_likelihood, residual_impact,
				SUM(n), TRUE
			FROM gone
			GROUP BY tenant_id, status, treatment, likelihood, impact, residual_likelihood, residual_impact
			ORDER BY tenant_id, status, treatment, likelihood, impact, residual_likelihood, residual_impact
			ON CONFLICT (tenant_id, status, treatment, likelihood, impact, residual_likelihood, residual_impact)
				WHERE folded DO UPDATE SET n = risk_heat_counts.n + EXCLUDED.n
			RETURNING 1)
		SELECT COUNT(*) FROM gone`, limit).Scan(&n).Error
	if err != nil {
		return 0, fmt.Errorf("fold heat counts: %w", err)
	}
	return n, nil
}
