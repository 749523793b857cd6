package eventstore

import (
	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/events"
)

// Recording makes s record the creation and deletion of webhook endpoints through
// rec, and returns s. Without it those writes fail with changes.ErrNoRecorder. (A
// setter, not a parameter of New: the recorders emit events into s.)
func (s *Store) Recording(rec changes.Recorder) *Store {
	s.point = changes.Point{Tx: database.NewRunner(s.db), Recorder: rec}
	return s
}

// endpointView is an endpoint as its recorded changes show it, its events as the
// API lists them ("*": every type): never its secret.
type endpointView struct {
	ID     string        `json:"id"`
	URL    string        `json:"url"`
	Events []events.Type `json:"events"`
}

func endpointChange(action changes.Action, e *events.Endpoint, before, after bool) changes.Change {
	c := changes.Change{TenantID: e.TenantID, Action: action, Target: changes.Target{Type: "webhook_endpoint", ID: e.ID}}
	v := endpointView{ID: e.ID, URL: e.URL, Events: e.Types}
	if len(v.Events) == 0 {
		v.Events = []events.Type{"*"}
	}
	if before {
		c.Before = v
	}
	if after {
		c.After = v
	}
	return c
}
