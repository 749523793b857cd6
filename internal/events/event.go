// Package events is riskapi's transactional outbox: every committed change to a
// tenant's data emits one Event, written in the same transaction as the change and
// its idempotency record, and queued for delivery to the tenant's webhook endpoints
// (docs/events.md). A replayed, refused or rolled-back request therefore emits
// nothing, and a committed one exactly one event.
//
// It knows nothing of HTTP, SQL or the resources it reports on: callers hand it the
// object's JSON form.
package events

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/riskapi/riskapi/internal/changes"
)

// Type names what happened (docs/events.md).
type Type string

// Some of the event types riskapi emits, named for the code that emits events
// without a recorded change (tests, the delivery worker's); Types has them all.
const (
	RiskCreated       = Type(changes.RiskCreated)
	RiskUpdated       = Type(changes.RiskUpdated)
	RiskDeleted       = Type(changes.RiskDeleted)
	AttachmentCreated = Type(changes.AttachmentCreated)
	AttachmentDeleted = Type(changes.AttachmentDeleted)
)

// Types lists every event type, in documentation order: the actions of
// changes.Registry declared as events (changes.Declared.Event).
var Types = changes.Names[Type](changes.IsEvent)

// Valid reports whether t is one of Types.
func (t Type) Valid() bool { return slices.Contains(Types, t) }

// Event is one emitted event.
type Event struct {
	ID        string // "evt_…", UUIDv7: IDs sort by emission time
	TenantID  string
	Type      Type
	CreatedAt time.Time // UTC, microseconds
	// Payload is the event's JSON exactly as listed and delivered, built once at
	// emission: every delivery attempt sends, and signs, the same bytes.
	Payload json.RawMessage
}

// Request identifies the API request whose change emitted an event.
type Request struct {
	// ID is the request's X-Request-Id.
	ID string
	// IdempotencyKey is the request's Idempotency-Key, or "" when it had none.
	IdempotencyKey string

	emitted []Type // what this request emitted, for metrics
	queued  int    // deliveries its events queued, for the worker's wake-up
}

// Emitted returns the types of the events emitted under r so far (in order). Once
// the request's unit of work has committed, they are the request's events.
func (r *Request) Emitted() []Type { return slices.Clone(r.emitted) }

// Queued is how many deliveries the events emitted under r queued: none when no
// endpoint of the tenant subscribes to them.
func (r *Request) Queued() int { return r.queued }

type requestKey struct{}

// WithRequest returns ctx carrying r; Emit reads the request's id and key from it
// and notes what it emitted there.
func WithRequest(ctx context.Context, r *Request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

// RequestFrom returns the request ctx carries, or nil (a CLI command, a job).
func RequestFrom(ctx context.Context) *Request {
	r, _ := ctx.Value(requestKey{}).(*Request)
	return r
}

// envelope is an event's wire form (docs/events.md).
type envelope struct {
	ID        string    `json:"id"`
	Type      Type      `json:"type"`
	CreatedAt time.Time `json:"createdAt"`
	// Livemode is false for an event of the tenant's sandbox (docs/sandboxes.md).
	Livemode bool `json:"livemode"`
	Data     struct {
		Object any `json:"object"`
		// PreviousAttributes: on an update, the previous values of the members
		// that changed.
		PreviousAttributes map[string]json.RawMessage `json:"previousAttributes,omitempty"`
	} `json:"data"`
	Request struct {
		ID             *string `json:"id"`
		IdempotencyKey *string `json:"idempotencyKey"`
	} `json:"request"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Errors of events.
var (
	// ErrNotFound: no event with that ID in that tenant.
	ErrNotFound = errors.New("event not found")
	// ErrNoUnitOfWork: Emit was called outside a transaction, where the event could
	// commit without its change or the change without its event.
	ErrNoUnitOfWork = errors.New("events: Emit needs the change's transaction in its context")
)

// Filter selects a page of a tenant's events, newest first.
type Filter struct {
	Limit  int    // 1–100
	Before string // only events older than this event ID (the cursor), if set
	Type   Type   // only events of this type, if set
}

// Store persists events and queues their deliveries. Every method writes through
// the transaction its context carries, if any (internal/database.Conn).
type Store interface {
	// Insert stores ev and, in the same transaction, queues one delivery of it to
	// each of its tenant's endpoints subscribed to its type, due at ev.CreatedAt and
	// given up at retryUntil. It calls queued with how many deliveries it queued once
	// the statement that queues them has run: before it returns, or (PostgreSQL, a
	// unit of work that may still be one statement: internal/database.ExecLast) when
	// the unit of work sends it, before it commits.
	Insert(ctx context.Context, ev *Event, retryUntil time.Time, queued func(n int)) error
	// InsertMany is Insert of each of evs (a batch write's events) in fewer
	// statements: each event's deliveries are due at its CreatedAt, all given up at
	// retryUntil. It returns how many deliveries it queued in all.
	InsertMany(ctx context.Context, evs []*Event, retryUntil time.Time) (int, error)
	// Get returns the tenant's event with id, or ErrNotFound.
	Get(ctx context.Context, tenantID, id string) (*Event, error)
	// List returns up to f.Limit events, newest first, and whether more follow.
	List(ctx context.Context, tenantID string, f Filter) ([]*Event, bool, error)
	// DeleteCreatedBefore deletes at most limit events created before t, with their
	// deliveries and attempts, and returns how many events it deleted.
	DeleteCreatedBefore(ctx context.Context, t time.Time, limit int) (int, error)
}
