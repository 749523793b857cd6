package appetite

import (
	"context"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/risks/riskview"
)

// Exceeded is risk.appetite_exceeded's object: the risk as written and the appetite
// its riskScore is now above (docs/events.md).
type Exceeded struct {
	riskview.Risk
	Appetite int `json:"appetite"`
}

// Recorder records each change with Next, and after each write of a risk that moves
// it from within its appetite (or from no score, or from nothing) to above it,
// records risk.appetite_exceeded with Next too — in the same transaction, so the
// crossing's event commits with the write or neither does. A write that leaves a
// risk above it (or moves it from one category above appetite to another) is no
// crossing: once per crossing.
type Recorder struct {
	Next     changes.Recorder // required
	Appetite Reader           // required; reads in the change's transaction
}

var _ changes.BatchRecorder = Recorder{}

// Record implements changes.Recorder: Next records c as it records any single
// change — on PostgreSQL the audit entry and the event held for the unit of work's
// one statement (database.Defer, ExecLast), where RecordAll's batch form would send
// each on its own — then its crossing, if any.
func (r Recorder) Record(ctx context.Context, c changes.Change) error {
	if err := r.Next.Record(ctx, c); err != nil {
		return err
	}
	return r.crossings(ctx, []changes.Change{c})
}

// RecordAll implements changes.BatchRecorder: Next records cs, then the crossings
// among them, reading each tenant's appetite once.
func (r Recorder) RecordAll(ctx context.Context, cs []changes.Change) error {
	if err := changes.RecordAll(ctx, r.Next, cs); err != nil {
		return err
	}
	return r.crossings(ctx, cs)
}

// crossings records risk.appetite_exceeded with Next for each of cs that crossed.
func (r Recorder) crossings(ctx context.Context, cs []changes.Change) error {
	var crossed []changes.Change
	seen := map[string]Appetite{}
	for _, c := range cs {
		before, after, ok := scored(c)
		if !ok {
			continue
		}
		a, read := seen[c.TenantID]
		if !read {
			var err error
			if a, err = r.Appetite.Get(ctx, c.TenantID); err != nil {
				return err
			}
			seen[c.TenantID] = a
		}
		if !a.Outside(after.Category, after.RiskScore) || (before != nil && a.Outside(before.Category, before.RiskScore)) {
			continue
		}
		n, _ := a.For(after.Category)
		crossed = append(crossed, changes.Change{TenantID: c.TenantID, Actor: c.Actor, Action: changes.RiskAppetiteExceeded,
			Target: changes.Target{Type: "risk", ID: c.Target.ID}, After: Exceeded{Risk: *after, Appetite: n}})
	}
	if len(crossed) == 0 {
		return nil
	}
	return changes.RecordAll(ctx, r.Next, crossed)
}

// scored returns the risk before and after c when c is a creation or update of a
// risk that may have crossed: one whose riskScore or category is new. False for
// any other change.
func scored(c changes.Change) (before, after *riskview.Risk, ok bool) {
	if c.Action != changes.RiskCreated && c.Action != changes.RiskUpdated {
		return nil, nil, false
	}
	a, isRisk := c.After.(riskview.Risk)
	if !isRisk || a.RiskScore == nil {
		return nil, nil, false
	}
	if b, isRisk := c.Before.(riskview.Risk); isRisk {
		if b.Category == a.Category && b.RiskScore != nil && *b.RiskScore >= *a.RiskScore {
			return nil, nil, false
		}
		return &b, &a, true
	}
	return nil, &a, true
}
