package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/tracing"
)

// errNoRetryWindow is the error of an Emitter or Endpoints built without RetryFor.
var errNoRetryWindow = errors.New("events: RetryFor must be positive")

// Emitter writes events into the transaction of the change they report.
type Emitter struct {
	// Store persists events. Required.
	Store Store
	// RetryFor bounds the retries of each delivery the event queues
	// (WEBHOOK_RETRY_FOR). Required.
	RetryFor time.Duration
	// Now is the clock. Optional. Default time.Now.
	Now func() time.Time
	// Traces, when set, remembers the trace each event was emitted in, so that its
	// deliveries join it (docs/tracing.md). Optional. Default nil: not remembered.
	Traces *tracing.Parents
}

// Emit records that typ happened to object (its JSON form, as the API returns it) in
// tenantID, through the transaction ctx carries: it commits or rolls back with the
// change. The event carries the request ctx carries (WithRequest), if any.
//
// Errors: ErrNoUnitOfWork when ctx carries no transaction; a RetryFor that is not
// positive; the store's.
func (e *Emitter) Emit(ctx context.Context, tenantID string, typ Type, object any) (*Event, error) {
	return e.emit(ctx, tenantID, typ, object, nil)
}

// emit is Emit with data.previousAttributes, left out when prev is nil.
func (e *Emitter) emit(ctx context.Context, tenantID string, typ Type, object any, prev map[string]json.RawMessage) (*Event, error) {
	return e.emitWithID(ctx, "", tenantID, typ, object, prev)
}

// emitWithID is emit of an event whose ID is id (a due-date notice's derived ID),
// or a new one when id is "".
func (e *Emitter) emitWithID(ctx context.Context, id, tenantID string, typ Type, object any, prev map[string]json.RawMessage) (*Event, error) {
	if e.RetryFor <= 0 {
		return nil, errNoRetryWindow
	}
	ev, err := e.build(ctx, id, tenantID, typ, object, prev, e.now())
	if err != nil {
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	// The count of queued deliveries may come only when the unit of work sends the
	// statement (Store.Insert).
	err = e.Store.Insert(ctx, ev, ev.CreatedAt.Add(e.RetryFor), func(n int) {
		if req := RequestFrom(ctx); req != nil {
			req.queued += n
		}
	})
	if err != nil {
		return nil, err
	}
	e.emitted(ctx, 0, ev)
	return ev, nil
}

// emission is one event of emitAll.
type emission struct {
	id       string // "" for a new ID
	tenantID string
	typ      Type
	object   any
	prev     map[string]json.RawMessage
}

// emitAll is emit for many events of one unit of work, stored together
// (Store.InsertMany) and created at the same instant. Errors: as Emit's.
func (e *Emitter) emitAll(ctx context.Context, es []emission) error {
	if e.RetryFor <= 0 {
		return errNoRetryWindow
	}
	if len(es) == 0 {
		return nil
	}
	at := e.now()
	evs := make([]*Event, len(es))
	for i, m := range es {
		ev, err := e.build(ctx, m.id, m.tenantID, m.typ, m.object, m.prev, at)
		if err != nil {
			return err
		}
		evs[i] = ev
	}
	n, err := e.Store.InsertMany(ctx, evs, at.Add(e.RetryFor))
	if err != nil {
		return err
	}
	e.emitted(ctx, n, evs...)
	return nil
}

// now is the clock's time as events keep it (UTC, microseconds).
func (e *Emitter) now() time.Time {
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	return now().UTC().Truncate(time.Microsecond)
}

// build is the event of typ on object, created at, with its payload; its ID is id,
// or a new one when id is "".
func (e *Emitter) build(ctx context.Context, id, tenantID string, typ Type, object any, prev map[string]json.RawMessage, at time.Time) (*Event, error) {
	if id == "" {
		id = ids.New(ids.Event)
	}
	ev := &Event{ID: id, TenantID: tenantID, Type: typ, CreatedAt: at}
	var env envelope
	env.ID, env.Type, env.CreatedAt, env.Data.Object = ev.ID, typ, ev.CreatedAt, object
	env.Livemode = ids.Livemode(tenantID)
	env.Data.PreviousAttributes = prev
	if req := RequestFrom(ctx); req != nil {
		env.Request.ID, env.Request.IdempotencyKey = nullable(req.ID), nullable(req.IdempotencyKey)
	}
	payload, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("encode %s event: %w", typ, err)
	}
	ev.Payload = payload
	return ev, nil
}

// emitted notes evs, stored with n deliveries queued, for their traces and the
// request ctx carries.
func (e *Emitter) emitted(ctx context.Context, n int, evs ...*Event) {
	for _, ev := range evs {
		e.Traces.Remember(ctx, ev.ID)
	}
	if req := RequestFrom(ctx); req != nil {
		for _, ev := range evs {
			req.emitted = append(req.emitted, ev.Type)
		}
		req.queued += n
	}
}
