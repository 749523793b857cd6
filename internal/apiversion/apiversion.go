// Package apiversion is the home of API version changes (contract section 18, the
// model of Stripe's version change modules): the list of dated versions, and one
// Change per version change, each of which knows how to take a request body written
// in the version before it forward, and a response body or an event's object back.
// Handlers, stores and views speak only the newest version; the edge translates.
//
// It knows nothing of HTTP, SQL or the resources' Go types: a change works on the
// JSON object of a resource type ("risk", "attachment", …, the types of
// internal/changes' actions), decoded, or its members' encoded values.
package apiversion

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Version is an API version, the date its shapes were released: "YYYY-MM-DD".
// Versions sort by their text.
type Version string

// Object is one resource's JSON object, decoded (numbers as json.Number, see
// DecodeObject); a transform changes it in place.
type Object = map[string]any

// Transform rewrites obj, a resource of one of its Change's types, in place.
type Transform func(obj Object) error

// Change is one version change module: what changed at Version, for the resource
// types it names. Each transform is optional (nil: that direction is unchanged).
type Change struct {
	// Version is the first version with the new shape.
	Version Version
	// Description is the change's line in docs/api-versions.md.
	Description string
	// Resources are the resource types whose objects it changes ("risk").
	Resources []string
	// Members take a response's object in the shape of Version back to the version
	// before it on its encoded bytes, member by member: each top-level member they
	// name ("owner") has its value rendered, every other byte is copied as written,
	// so that an old version's page costs one pass over its bytes (shallow.go). A
	// change gives Members or Response, not both.
	Members map[string]MemberRender
	// Request takes a request body written in the version before Version to the
	// shape of Version (forward).
	Request Transform
	// Response takes a response's object in the shape of Version back to the
	// version before it, decoded whole: for a change Members cannot say (one that
	// moves a value between members).
	Response Transform
	// Event takes an event's data.object (and previousAttributes) in the shape of
	// Version back to the version before it; nil: as responses are (Members or
	// Response), when the event's object is the resource as responses show it.
	Event Transform
}

// response is c's Response, or its Members on a decoded object.
func (c Change) response() Transform {
	if c.Members != nil {
		return decodedMembers(c.Members)
	}
	return c.Response
}

// event is c's Event, else its response.
func (c Change) event() Transform {
	if c.Event != nil {
		return c.Event
	}
	return c.response()
}

// ErrUnknown is returned for a version not in the Set (contract section 18:
// 400 API_VERSION_UNKNOWN at the edge).
var ErrUnknown = errors.New("apiversion: unknown version")

// ErrShape is wrapped by a request transform that finds a body not in its
// version's shape (a 400 naming the field at the edge: ShapeError).
var ErrShape = errors.New("apiversion: not in this version's shape")

// ShapeError is a request body member not in its version's shape.
type ShapeError struct {
	Field, Detail string
}

func (e *ShapeError) Error() string { return "apiversion: " + e.Field + ": " + e.Detail }

// Unwrap makes a ShapeError an ErrShape.
func (e *ShapeError) Unwrap() error { return ErrShape }

// Set is the versions and the changes between them.
type Set struct {
	versions []Version // oldest first
	changes  []Change  // by Version, oldest first
	// wholeDecode renders every answer by decoding it whole (tests compare the
	// bytes' rendering with it: export_test.go).
	wholeDecode bool
}

// New returns the Set of versions (oldest first, each a date) and changes (each at
// one of versions but the first, in version order). Errors: a malformed or
// unordered version, a change at no version or at the first, changes out of order.
func New(versions []Version, changes []Change) (*Set, error) {
	if len(versions) == 0 {
		return nil, errors.New("apiversion: no version")
	}
	for i, v := range versions {
		if _, err := time.Parse(time.DateOnly, string(v)); err != nil {
			return nil, fmt.Errorf("apiversion: version %q is no date (YYYY-MM-DD)", v)
		}
		if i > 0 && v <= versions[i-1] {
			return nil, fmt.Errorf("apiversion: version %s does not follow %s", v, versions[i-1])
		}
	}
	for i, c := range changes {
		if at := slices.Index(versions, c.Version); at <= 0 {
			return nil, fmt.Errorf("apiversion: change %q is at %s, which is no version after the first", c.Description, c.Version)
		}
		if i > 0 && c.Version < changes[i-1].Version {
			return nil, fmt.Errorf("apiversion: change %q is listed after a newer one", c.Description)
		}
		if len(c.Resources) == 0 {
			return nil, fmt.Errorf("apiversion: change %q names no resource type", c.Description)
		}
		if c.Members != nil && c.Response != nil {
			return nil, fmt.Errorf("apiversion: change %q gives both Members and Response", c.Description)
		}
	}
	return &Set{versions: slices.Clone(versions), changes: slices.Clone(changes)}, nil
}

// Versions returns the versions, oldest first.
func (s *Set) Versions() []Version { return slices.Clone(s.versions) }

// Newest is the newest version: the one handlers speak, and the pin of a new tenant.
func (s *Set) Newest() Version { return s.versions[len(s.versions)-1] }

// Parse returns the version named text. Errors: ErrUnknown.
func (s *Set) Parse(text string) (Version, error) {
	if v := Version(text); slices.Contains(s.versions, v) {
		return v, nil
	}
	return "", fmt.Errorf("%w: %q", ErrUnknown, text)
}

// Request takes obj, a request body of resource type resource written in version v,
// to the newest version: the changes after v that touch resource, oldest first.
// Errors: ErrUnknown, a transform's.
func (s *Set) Request(v Version, resource string, obj Object) error {
	after, err := s.after(v, resource)
	if err != nil {
		return err
	}
	for _, c := range after {
		if c.Request != nil {
			if err := c.Request(obj); err != nil {
				return fmt.Errorf("apiversion: request in %s (%s): %w", v, c.Version, err)
			}
		}
	}
	return nil
}

// Response takes obj, a resource of type resource in the newest version, back to
// version v: the changes after v that touch resource, newest first (a change's
// Members, else its Response). Errors:
// ErrUnknown, a transform's.
func (s *Set) Response(v Version, resource string, obj Object) error {
	return s.back(v, resource, obj, Change.response)
}

// Event takes obj, an event's data.object of type resource in the newest version,
// back to version v, as Response does (a change's Event transform, else as
// Response). Errors: ErrUnknown, a transform's.
func (s *Set) Event(v Version, resource string, obj Object) error {
	return s.back(v, resource, obj, Change.event)
}

func (s *Set) back(v Version, resource string, obj Object, pick func(Change) Transform) error {
	after, err := s.after(v, resource)
	if err != nil {
		return err
	}
	for _, c := range slices.Backward(after) {
		if t := pick(c); t != nil {
			if err := t(obj); err != nil {
				return fmt.Errorf("apiversion: back to %s (%s): %w", v, c.Version, err)
			}
		}
	}
	return nil
}

// after returns the changes newer than v that touch resource, oldest first.
func (s *Set) after(v Version, resource string) ([]Change, error) {
	if !slices.Contains(s.versions, v) {
		return nil, fmt.Errorf("%w: %q", ErrUnknown, v)
	}
	var out []Change
	for _, c := range s.changes {
		if c.Version > v && slices.Contains(c.Resources, resource) {
			out = append(out, c)
		}
	}
	return out, nil
}

// Changes returns the changes, oldest first (docs/api-versions.md lists them).
func (s *Set) Changes() []Change { return slices.Clone(s.changes) }
