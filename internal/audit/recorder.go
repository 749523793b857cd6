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

var _ changes.BatchRecorder = Recorder{}

// Record implements changes.Recorder. Errors: a public form that is no JSON object,
// the store's.
func (r Recorder) Record(ctx context.Context, c changes.Change) error {
	e, err := r.entry(ctx, c)
	if err != nil {
		return err
	}
	return r.Store.Insert(ctx, e)
}

// RecordAll implements changes.BatchRecorder: one entry per change, as Record
// writes it, inserted together (Store.InsertMany).
func (r Recorder) RecordAll(ctx context.Context, cs []changes.Change) error {
	es := make([]*Entry, len(cs))
	for i, c := range cs {
		e, err := r.entry(ctx, c)
		if err != nil {
			return err
		}
		es[i] = e
	}
	return r.Store.InsertMany(ctx, es)
}

// entry is c's entry, occurring now.
func (r Recorder) entry(ctx context.Context, c changes.Change) (*Entry, error) {
	fields, err := Diff(c)
	if err != nil {
		return nil, err
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	o := changes.OriginFrom(ctx)
	at := now().UTC().Truncate(time.Microsecond)
	return &Entry{ID: ids.NewAt(ids.Audit, at), TenantID: c.TenantID, OccurredAt: at,
		Actor:  Actor{Type: string(c.Actor.Type), ID: c.Actor.ID, Email: c.Actor.Email},
		Action: string(c.Action), Target: Target{Type: c.Target.Type, ID: c.Target.ID}, Changes: fields,
		RequestID: o.RequestID, IP: o.IP, UserAgent: o.UserAgent, Via: o.Via, Client: o.Client,
		RiskID: changes.RiskOf(c)}, nil
}
