package riskstore

import (
	"context"
	"fmt"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/risks"
)

// GetByIDs returns the tenant's risks whose ID is one of ids, by ID (IDs of no risk
// of the tenant, another tenant's included, are missing from the map), reading a
// thousand IDs per statement through the primary key.
func (s *Store) GetByIDs(ctx context.Context, tenantID string, ids []string) (map[string]*risks.Risk, error) {
	out := make(map[string]*risks.Risk)
	per := database.BatchParams(s.db) - 1 // and the tenant's
	for start := 0; start < len(ids); start += per {
		var ws []row
		chunk := ids[start:min(start+per, len(ids))]
		if err := s.tenant(ctx, tenantID).Where("id IN ?", chunk).Find(&ws).Error; err != nil {
			return nil, fmt.Errorf("get risks by id: %w", err)
		}
		for i := range ws {
			r := toRisk(&ws[i])
			out[r.ID] = r
		}
	}
	return out, nil
}
