package events

import (
	"context"
	"encoding/json"

	"github.com/riskapi/riskapi/internal/changes"
)

// Bookkeeping names the members of an object that change with every change and are
// therefore never listed in previousAttributes (docs/events.md).
var Bookkeeping = []string{"updatedAt", "version"}

// Recorder emits the event of each recorded change whose action is an event type
// (docs/events.md), through Emitter, in the change's transaction: data.object is the
// resource after the change (as it was, for a deletion); an update also carries
// data.previousAttributes, the previous values of exactly the members that changed.
// An action that is no event type (one the audit log alone records) emits nothing.
type Recorder struct {
	Emitter *Emitter // required
}

var _ changes.Recorder = Recorder{}

var _ changes.BatchRecorder = Recorder{}

// Record implements changes.Recorder. Errors: ErrNoUnitOfWork, the store's.
func (r Recorder) Record(ctx context.Context, c changes.Change) error {
	m, ok, err := emissionOf(c)
	if !ok || err != nil {
		return err
	}
	_, err = r.Emitter.emitWithID(ctx, m.id, m.tenantID, m.typ, m.object, m.prev)
	return err
}

// RecordAll implements changes.BatchRecorder: the events Record would emit, one
// per change whose action is an event type, stored together and created at the
// same instant. Errors: as Record's.
func (r Recorder) RecordAll(ctx context.Context, cs []changes.Change) error {
	var es []emission
	for _, c := range cs {
		m, ok, err := emissionOf(c)
		if err != nil {
			return err
		}
		if ok {
			es = append(es, m)
		}
	}
	return r.Emitter.emitAll(ctx, es)
}

// emissionOf is the event c emits; false when its action is no event type.
func emissionOf(c changes.Change) (emission, bool, error) {
	typ := Type(c.Action)
	if !typ.Valid() {
		return emission{}, false, nil
	}
	object := c.After
	if object == nil {
		object = c.Before
	}
	var prev map[string]json.RawMessage
	if c.Before != nil && c.After != nil {
		var err error
		if prev, err = changes.Previous(c.Before, c.After, Bookkeeping...); err != nil {
			return emission{}, false, err
		}
	}
	return emission{id: c.EventID, tenantID: c.TenantID, typ: typ, object: object, prev: prev}, true, nil
}
