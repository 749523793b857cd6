package webhookstore

import (
	"time"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/webhooks"
)

// Recording makes s record the creation and deletion of sources through rec, and
// returns s. Without it those writes fail with changes.ErrNoRecorder.
func (s *Store) Recording(rec changes.Recorder) *Store {
	s.point = changes.Point{Tx: database.NewRunner(s.db), Recorder: rec}
	return s
}

// sourceView is a source as its recorded changes show it: never its secret.
type sourceView struct {
	ID        string    `json:"id"`
	Name      string    `json:"source"`
	CreatedAt time.Time `json:"createdAt"`
}

func sourceChange(action changes.Action, src *webhooks.Source, before, after bool) changes.Change {
	c := changes.Change{TenantID: src.TenantID, Action: action, Target: changes.Target{Type: "webhook_source", ID: src.ID}}
	v := sourceView{ID: src.ID, Name: src.Name, CreatedAt: src.CreatedAt}
	if before {
		c.Before = v
	}
	if after {
		c.After = v
	}
	return c
}
