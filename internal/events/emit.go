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
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	retryFor := e.RetryFor
	if retryFor <= 0 {
		return nil, errNoRetryWindow
	}
	ev := &Event{ID: ids.New(ids.Event), TenantID: tenantID, Type: typ,
		CreatedAt: now().UTC().Truncate(time.Microsecond)}
	var env envelope
	env.ID, env.Type, env.CreatedAt, env.Data.Object = ev.ID, typ, ev.CreatedAt, object
	env.Data.PreviousAttributes = prev
	req := RequestFrom(ctx)
	if req != nil {
		env.Request.ID, env.Request.IdempotencyKey = nullable(req.ID), nullable(req.IdempotencyKey)
	}
	payload, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("encode %s event: %w", typ, err)
	}
	ev.Payload = payload
	err = e.Store.Insert(ctx, ev, ev.CreatedAt.Add(retryFor), func(n int) {
		if req != nil {
			req.queued += n
		}
	})
	if err != nil {
		return nil, err
	}
	e.Traces.Remember(ctx, ev.ID)
	if req != nil {
		req.emitted = append(req.emitted, typ)
	}
	return ev, nil
}
