package webhookstore

import (
	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/webhooks"
	"github.com/riskapi/riskapi/internal/webhooks/sourceview"
)

// Recording makes s record the creation and deletion of sources through rec, and
// returns s. Without it those writes fail with changes.ErrNoRecorder.
func (s *Store) Recording(rec changes.Recorder) *Store {
	s.point = changes.Point{Tx: database.NewRunner(s.db), Recorder: rec}
	return s
}

// sourceChange is the record of src's creation (after) or deletion (before), in its
// public form (internal/webhooks/sourceview): never its secret.
func sourceChange(action changes.Action, src *webhooks.Source, before, after bool) changes.Change {
	c := changes.Change{TenantID: src.TenantID, Action: action, Target: changes.Target{ID: src.ID}}
	v := sourceview.Of(src)
	if before {
		c.Before = v
	}
	if after {
		c.After = v
	}
	return c
}
