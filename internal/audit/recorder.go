package audit

import (
	"context"
	"time"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/ids"
)

// Recorder writes one entry per recorded change, through Store, in the change's
// transaction (internal/changes): a change that rolls back takes its entry with it.
// The request's id, client address and user agent come from the context
// (changes.OriginFrom), the actor from the change.
type Recorder struct {
	Store Store // required
	// Now is the clock. Optional. Default time.Now.
	Now func() time.Time
}

var _ changes.Recorder = Recorder{}

// Record implements changes.Recorder. Errors: a public form that is no JSON object,
// the store's.
func (r Recorder) Record(ctx context.Context, c changes.Change) error {
	fields, err := Diff(c)
	if err != nil {
		return err
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	o := changes.OriginFrom(ctx)
	at := now().UTC().Truncate(time.Microsecond)
	e := &Entry{ID: ids.NewAt(ids.Audit, at), TenantID: c.TenantID, OccurredAt: at,
		Actor:  Actor{Type: string(c.Actor.Type), ID: c.Actor.ID, Email: c.Actor.Email},
		Action: string(c.Action), Target: Target{Type: c.Target.Type, ID: c.Target.ID}, Changes: fields,
		RequestID: o.RequestID, IP: o.IP, UserAgent: o.UserAgent}
	return r.Store.Insert(ctx, e)
}
