package trends

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/risks"
)

// MaxMoveEntries bounds the audit entries one "moved since" reads
// (docs/register.md, "Moved since"): a tenant that changed more of its risks'
// factors since the date is asked for a later one. 50,000; a variable only so tests
// can lower it rather than write 50,001 entries (set it before serving, never while
// a request reads it). Nothing else sets it.
var MaxMoveEntries = 50_000

type moveRow struct {
	TargetID string
	Action   string
	Changes  *string
}

// factorChange is what an audit entry's changes say of the factors of a basis.
type factorChange struct {
	From *int `json:"from"`
}

// Past returns, for each risk of the tenant whose basis factors changed since
// since, what it was then (risks.Past): created since, or each changed factor's
// value before its first change since. It reads the tenant's risk.created and
// risk.updated entries from since on, through the audit log's (tenant_id, id) index
// (entry IDs are UUIDv7s of their time), those whose changes name a factor of the
// basis; more than MaxMoveEntries of them is ok false. An entry the audit sweep
// removed (AUDIT_LOG_TTL) is a change it no longer sees: callers refuse a since
// older than that.
func (s *Store) Past(ctx context.Context, tenantID string, since time.Time, basis risks.Basis) (past map[string]risks.Past, ok bool, err error) {
	lk, ik := "likelihood", "impact"
	if basis == risks.BasisResidual {
		lk, ik = "residualLikelihood", "residualImpact"
	}
	bound := MaxMoveEntries
	// One entry past the bound: reading it tells the bound is passed. Not a page
	// (no cursor follows it).
	readLimit := bound + 1
	var rows []moveRow
	err = s.tenant(ctx, tenantID).Table("audit_log").
		// A creation's changes are the whole risk, and all it says here is "new".
		Select("target_id, action, CASE WHEN action = ? THEN NULL ELSE changes END AS changes", string(changes.RiskCreated)).
		Where("id >= ? AND action IN ?", ids.Before(ids.Audit, since),
			[]string{string(changes.RiskCreated), string(changes.RiskUpdated)}).
		// A prefilter only (the entries are decoded below): the members' names, quoted.
		Where("(changes LIKE ? OR changes LIKE ?)", `%"`+lk+`":%`, `%"`+ik+`":%`).
		Order("id").Limit(readLimit).Scan(&rows).Error
	if err != nil {
		return nil, false, fmt.Errorf("read moves: %w", err)
	}
	if len(rows) > bound {
		return nil, false, nil
	}
	past = map[string]risks.Past{}
	for _, r := range rows {
		p, seen := past[r.TargetID]
		if r.Action == string(changes.RiskCreated) {
			// Created since: on no cell then, whatever came after.
			past[r.TargetID] = risks.Past{New: true}
			continue
		}
		if p.New || r.Changes == nil {
			continue
		}
		var c map[string]*factorChange
		if err := json.Unmarshal([]byte(*r.Changes), &c); err != nil {
			return nil, false, fmt.Errorf("read moves: %w", err)
		}
		// The first change of each factor since says what it was then.
		if f := c[lk]; f != nil && !p.LikelihoodChanged {
			p.Likelihood, p.LikelihoodChanged = f.From, true
		}
		if f := c[ik]; f != nil && !p.ImpactChanged {
			p.Impact, p.ImpactChanged = f.From, true
		}
		if seen || p.LikelihoodChanged || p.ImpactChanged {
			past[r.TargetID] = p
		}
	}
	return past, true, nil
}
