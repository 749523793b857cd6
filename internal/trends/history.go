package trends

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/riskapi/riskapi/internal/changes"
)

// MaxHistory bounds a score history: its newest points.
const MaxHistory = 500

// ScorePoint is a risk's riskScore and residualScore from At on (GET
// /risks/{id}/score-history).
type ScorePoint struct {
	At            time.Time `json:"at"`
	RiskScore     *int      `json:"riskScore"`
	ResidualScore *int      `json:"residualScore"`
}

type historyRow struct {
	OccurredAt time.Time
	Changes    *string
}

type scoreChange struct {
	RiskScore     *fieldChange `json:"riskScore"`
	ResidualScore *fieldChange `json:"residualScore"`
}

type fieldChange struct {
	To *int `json:"to"`
}

// ScoreHistory returns the risk's score history from its audit entries
// (risk.created, and each risk.updated that changed riskScore or residualScore),
// oldest first: up to MaxHistory of the newest points; found is false when the
// risk has no entries (no such risk, ever). An entry the audit sweep removed
// (AUDIT_LOG_TTL) is a point the history no longer has.
func (s *Store) ScoreHistory(ctx context.Context, tenantID, riskID string) (points []ScorePoint, found bool, err error) {
	var rows []historyRow
	err = s.tenant(ctx, tenantID).Table("audit_log").Select("occurred_at, changes").
		Where("target_id = ? AND action IN ?", riskID, []string{string(changes.RiskCreated), string(changes.RiskUpdated)}).
		Order("occurred_at DESC, id DESC").Limit(20 * MaxHistory).Scan(&rows).Error
	if err != nil {
		return nil, false, fmt.Errorf("read score history: %w", err)
	}
	var cur ScorePoint
	out := []ScorePoint{}
	for i := len(rows) - 1; i >= 0; i-- {
		r := rows[i]
		if r.Changes == nil {
			continue
		}
		var c scoreChange
		if err := json.Unmarshal([]byte(*r.Changes), &c); err != nil {
			return nil, false, fmt.Errorf("read score history: %w", err)
		}
		if c.RiskScore == nil && c.ResidualScore == nil {
			continue
		}
		if c.RiskScore != nil {
			cur.RiskScore = c.RiskScore.To
		}
		if c.ResidualScore != nil {
			cur.ResidualScore = c.ResidualScore.To
		}
		cur.At = r.OccurredAt.UTC()
		out = append(out, cur)
	}
	if len(out) > MaxHistory {
		out = out[len(out)-MaxHistory:]
	}
	return out, len(rows) > 0, nil
}
