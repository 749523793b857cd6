package apiversion

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
)

// Header is the request and response header naming a version (contract section 18).
const Header = "Riskapi-Version"

type ctxKey struct{}

// With returns ctx carrying v, the version its request is read and answered in.
func With(ctx context.Context, v Version) context.Context { return context.WithValue(ctx, ctxKey{}, v) }

// Of returns the version ctx carries, and whether it carries one.
func Of(ctx context.Context) (Version, bool) {
	v, ok := ctx.Value(ctxKey{}).(Version)
	return v, ok
}

// Touches reports whether a change after v touches resource: whether a body of
// resource needs translating at all between v and the newest.
func (s *Set) Touches(v Version, resource string) bool {
	if resource == "event" { // an event carries objects of every type
		return s.touchesAny(v)
	}
	after, err := s.after(v, resource)
	return err != nil || len(after) > 0
}

// RequestBody takes a JSON request body of resource written in v to the newest
// version. Errors: ErrUnknown, a transform's.
func (s *Set) RequestBody(v Version, resource string, body []byte) ([]byte, error) {
	obj, err := DecodeObject(body)
	if err != nil {
		return nil, err
	}
	before, _ := DecodeObject(body)
	if err := s.Request(v, resource, obj); err != nil {
		return nil, err
	}
	if reflect.DeepEqual(before, obj) {
		// Nothing of the old shape in it: the body as sent, its members in their
		// order (a validation error names them in it).
		return body, nil
	}
	return json.Marshal(obj)
}

// ResponseBody takes a JSON answer of resource in the newest version back to v: one
// resource, or a page ({"data": [...]}) of them. Resource "event" is an event or a
// page of events, each rendered as Event renders its data.object and
// data.previousAttributes. Errors: ErrUnknown, a transform's, a body that is no
// JSON object.
func (s *Set) ResponseBody(v Version, resource string, body []byte) ([]byte, error) {
	return s.AppendResponseBody(nil, v, resource, body)
}

// AppendResponseBody is ResponseBody appending to dst: a caller that renders many
// answers reuses one buffer rather than allocating a page's worth for each.
func (s *Set) AppendResponseBody(dst []byte, v Version, resource string, body []byte) ([]byte, error) {
	if !s.wholeDecode {
		if out, err := s.renderBody(dst, v, resource, body); !errors.Is(err, errDeep) && !errors.Is(err, errNotObject) {
			return out, err
		}
	}
	obj, err := DecodeObject(body)
	if err != nil {
		return nil, err
	}
	one := func(o Object) error { return s.Response(v, resource, o) }
	if resource == "event" {
		one = func(o Object) error { return s.EventObject(v, o) }
	}
	if items, ok := obj["data"].([]any); ok {
		for _, it := range items {
			if o, ok := it.(Object); ok {
				if err := one(o); err != nil {
					return nil, err
				}
			}
		}
	} else if err := one(obj); err != nil {
		return nil, err
	}
	out, err := json.Marshal(obj)
	return append(dst, out...), err
}

// EventObject renders an event (decoded: {"type", "data": {"object",
// "previousAttributes"}}) in v: its object and previous attributes pass Event for
// the resource its type names ("risk.updated": risk).
func (s *Set) EventObject(v Version, ev Object) error {
	typ, _ := ev["type"].(string)
	resource, _, _ := strings.Cut(typ, ".")
	data, ok := ev["data"].(Object)
	if !ok {
		return nil
	}
	for _, member := range []string{"object", "previousAttributes"} {
		if o, ok := data[member].(Object); ok {
			if err := s.Event(v, resource, o); err != nil {
				return err
			}
		}
	}
	return nil
}

// EventBody renders one event's JSON in v (a webhook delivery's body).
func (s *Set) EventBody(v Version, body []byte) ([]byte, error) {
	if !s.touchesAny(v) {
		return body, nil
	}
	if !s.wholeDecode {
		if out, err := s.renderBody(nil, v, "event", body); !errors.Is(err, errDeep) && !errors.Is(err, errNotObject) {
			return out, err
		}
	}
	ev, err := DecodeObject(body)
	if err != nil {
		return nil, err
	}
	if err := s.EventObject(v, ev); err != nil {
		return nil, err
	}
	return json.Marshal(ev)
}

// touchesAny reports whether any change is newer than v.
func (s *Set) touchesAny(v Version) bool {
	for _, c := range s.changes {
		if c.Version > v {
			return true
		}
	}
	return false
}
