package eventstore

import (
	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/events"
	"github.com/riskapi/riskapi/internal/events/endpointview"
)

// Recording makes s record the creation and deletion of webhook endpoints through
// rec, and returns s. Without it those writes fail with changes.ErrNoRecorder. (A
// setter, not a parameter of New: the recorders emit events into s.)
func (s *Store) Recording(rec changes.Recorder) *Store {
	s.point = changes.Point{Tx: database.NewRunner(s.db), Recorder: rec}
	return s
}

// endpointChange is the record of e's creation (after) or deletion (before), in its
// public form (internal/events/endpointview): never its secret.
func endpointChange(action changes.Action, e *events.Endpoint, before, after bool) changes.Change {
	c := changes.Change{TenantID: e.TenantID, Action: action, Target: changes.Target{ID: e.ID}}
	v := endpointview.Of(e)
	if before {
		c.Before = v
	}
	if after {
		c.After = v
	}
	return c
}
