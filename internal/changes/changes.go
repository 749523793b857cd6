// Package changes is the one recording point of riskapi's writes: every store that
// writes a tenant's data hands each change, inside the change's own transaction, to a
// Recorder (the outbox's events today; the audit log hangs off the same point). A
// change that rolls back takes its records with it; a committed one has exactly one.
//
// It knows nothing of HTTP, SQL or the resources: a change carries the resource's
// public JSON form before and after (docs/architecture.md, "recording point").
package changes

import (
	"context"
	"errors"
	"fmt"
)

// Action names what happened, "<target type>.<verb>" (e.g. "risk.updated"); the
// actions that are event types are emitted under the same name (docs/events.md).
type Action string

// Target is what a change is about.
type Target struct {
	Type string // "risk", "attachment", …
	ID   string // the resource's ID ("risk_…", "att_…")
}

// ActorType says what kind of author made a change (docs/events.md, contract's audit
// actor types).
type ActorType string

// The authors a change can have.
const (
	ActorUser          ActorType = "user"           // a session user
	ActorAPIKey        ActorType = "api_key"        // an API key
	ActorWebhookSource ActorType = "webhook_source" // an inbound webhook's source
	ActorSystem        ActorType = "system"         // a CLI command or a job
)

// Actor is the author of a change.
type Actor struct {
	Type ActorType
	ID   string // the user's, key's or source's ID; "" for ActorSystem
	// Email is a user's address as it was when they acted; "" for other actors.
	Email string
}

// Change is one write of one resource, as handed to a Recorder inside its transaction.
type Change struct {
	TenantID string
	Actor    Actor
	Action   Action
	Target   Target
	// Before is the resource's public form as stored before the change (nil for a
	// creation); After as stored after it (nil for a deletion). Each marshals to the
	// JSON the API returns for the resource.
	Before, After View
	// Secret names members that changed but whose values are secrets or passwords
	// and so appear in neither Before nor After: a recorder may say that they
	// changed, never what to (e.g. "password" on user.password_changed).
	Secret []string
	// EventID, when set, is the ID the change's event takes instead of a new one: a
	// due-date notice's, derived from (kind, object, due date) (ids.Derived), so the
	// same notice found twice is the same event (docs/register.md).
	EventID string
}

// View is a resource's public form: the value whose JSON the API returns for it
// (riskview.Risk, tenantview.User, …; one package per resource, docs/architecture.md).
// A change carries only views, so that any recorded change could become an event
// without touching its store, and none carries a secret.
type View interface {
	// Resource is the type of resource it shows: its actions' TargetType ("risk",
	// "webhook_source", …).
	Resource() string
}

// OfRisk is a View of a resource that belongs to a risk (an attachment): its
// changes are part of that risk's history as well as its own (docs/audit-log.md).
type OfRisk interface {
	View
	// OfRisk is the ID of the risk the resource belongs to.
	OfRisk() string
}

// RiskOf is the risk c's resource belongs to, when it is not a risk itself but its
// view says it belongs to one (OfRisk); "" otherwise.
func RiskOf(c Change) string {
	for _, v := range []View{c.After, c.Before} {
		if o, ok := v.(OfRisk); ok {
			return o.OfRisk()
		}
	}
	return ""
}

// Recorder records changes. Record runs inside the change's transaction (ctx carries
// it); an error rolls the change back.
type Recorder interface {
	Record(ctx context.Context, c Change) error
}

// Recorders records each change with every recorder in turn, stopping at the first
// error.
type Recorders []Recorder

// Record implements Recorder.
func (rs Recorders) Record(ctx context.Context, c Change) error {
	for _, r := range rs {
		if err := r.Record(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// BatchRecorder is a Recorder that can record many changes of one unit of work in
// fewer statements than one Record each (an import's thousands of creations). Each
// change still gets exactly the records Record would give it.
type BatchRecorder interface {
	Recorder
	// RecordAll records cs, in order, inside their transaction (ctx carries it);
	// an error rolls them all back.
	RecordAll(ctx context.Context, cs []Change) error
}

// RecordAll records cs with r: in one call when r is a BatchRecorder, else one
// Record each, in order.
func RecordAll(ctx context.Context, r Recorder, cs []Change) error {
	if b, ok := r.(BatchRecorder); ok {
		return b.RecordAll(ctx, cs)
	}
	for _, c := range cs {
		if err := r.Record(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// RecordAll implements BatchRecorder: each recorder records all of cs in turn
// (RecordAll), stopping at the first error.
func (rs Recorders) RecordAll(ctx context.Context, cs []Change) error {
	for _, r := range rs {
		if err := RecordAll(ctx, r, cs); err != nil {
			return err
		}
	}
	return nil
}

// declared checks that c's action is in Registry and its views show its target's
// type, and gives c that type when the store left it out.
func declared(c *Change) error {
	if _, ok := c.Action.Declaration(); !ok {
		return undeclared(c.Action)
	}
	if c.Target.Type == "" {
		c.Target.Type = c.Action.TargetType()
	}
	for _, v := range []View{c.Before, c.After} {
		if v != nil && v.Resource() != c.Target.Type {
			return fmt.Errorf("changes: %s records a %s's view", c.Action, v.Resource())
		}
	}
	return nil
}

// ErrNoRecorder is returned by a store asked to write without a Recorder: a write
// that records nothing would break "every committed change is recorded once".
var ErrNoRecorder = errors.New("changes: store has no Recorder")

type actorKey struct{}

// WithActor returns ctx carrying a as the author of the changes made under it (set
// by authentication for API requests, by the inbound webhook receiver for its events).
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor ctx carries, or ActorSystem when none (a CLI command,
// a job).
func ActorFrom(ctx context.Context) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok {
		return a
	}
	return Actor{Type: ActorSystem}
}

// UnitOfWork runs fn as one transaction: the one ctx carries, if any, else a new one
// committed when fn returns nil (internal/database.Runner).
type UnitOfWork interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Point is the recording point a store writes through, and its one transaction
// policy: a write and its records are one unit of work — the caller's transaction
// when ctx carries one (a keyed request's reservation, a service's unit of work, an
// inbound webhook's), else a transaction of their own.
type Point struct {
	Tx       UnitOfWork // required
	Recorder Recorder   // required: a store without one refuses to write
}

// Write runs write and records the change it returns, in one unit of work. The
// change's Actor is the one ctx carries (ActorFrom) unless write set it; its
// Target.Type, its action's (Action.TargetType) unless write set it. Errors:
// ErrNoRecorder, an action Registry lacks, write's, the recorder's, the
// transaction's.
func (p Point) Write(ctx context.Context, write func(ctx context.Context) (Change, error)) error {
	if p.Recorder == nil || p.Tx == nil {
		return ErrNoRecorder
	}
	return p.Tx.InTx(ctx, func(ctx context.Context) error {
		c, err := write(ctx)
		if err != nil {
			return err
		}
		if c.Actor == (Actor{}) {
			c.Actor = ActorFrom(ctx)
		}
		if err := declared(&c); err != nil {
			return err
		}
		return p.Recorder.Record(ctx, c)
	})
}

// WriteAll is Write for a write of many resources at once (a store's batch insert):
// write returns one change per resource written, and they are recorded together
// (RecordAll), in the same unit of work. Errors: as Write's.
func (p Point) WriteAll(ctx context.Context, write func(ctx context.Context) ([]Change, error)) error {
	if p.Recorder == nil || p.Tx == nil {
		return ErrNoRecorder
	}
	return p.Tx.InTx(ctx, func(ctx context.Context) error {
		cs, err := write(ctx)
		if err != nil {
			return err
		}
		actor := ActorFrom(ctx)
		for i := range cs {
			if cs[i].Actor == (Actor{}) {
				cs[i].Actor = actor
			}
			if err := declared(&cs[i]); err != nil {
				return err
			}
		}
		return RecordAll(ctx, p.Recorder, cs)
	})
}
