package changes

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// Previous returns, for each top-level JSON member whose value differs between
// before and after, its value in before (a member absent from before is null there),
// leaving out the members named in ignore. Both must marshal to JSON objects. It is
// how a risk.updated event's previousAttributes are found (docs/events.md).
func Previous(before, after any, ignore ...string) (map[string]json.RawMessage, error) {
	b, err := Members(before)
	if err != nil {
		return nil, err
	}
	a, err := Members(after)
	if err != nil {
		return nil, err
	}
	skip := make(map[string]bool, len(ignore))
	for _, k := range ignore {
		skip[k] = true
	}
	out := map[string]json.RawMessage{}
	for k, av := range a {
		if bv, ok := b[k]; !skip[k] && (!ok || !bytes.Equal(av, bv)) {
			if !ok {
				bv = json.RawMessage("null")
			}
			out[k] = bv
		}
	}
	for k, bv := range b {
		if _, ok := a[k]; !ok && !skip[k] {
			out[k] = bv
		}
	}
	return out, nil
}

// Members returns the top-level members of v's JSON form (nil for a nil v), each
// value a slice of that form. Errors: v does not marshal to a JSON object (or null).
func Members(v any) (map[string]json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("changes: encode: %w", err)
	}
	return split(raw)
}

// split reads raw's top-level members with jsontext, each value a slice of raw: every
// write splits its views (the audit entry's diff, an event's previousAttributes), and
// json.Unmarshal's reflection into a map was the largest part of that
// (docs/performance.md, issue 44). As lenient as json.Unmarshal: invalid UTF-8 inside
// a string is kept, and the last of two members of one name wins.
func split(raw []byte) (map[string]json.RawMessage, error) {
	d := jsontext.NewDecoder(bytes.NewBuffer(raw), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	tok, err := d.ReadToken()
	if err != nil {
		return nil, fmt.Errorf("changes: not a JSON object: %w", err)
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case '{':
	default:
		return nil, fmt.Errorf("changes: not a JSON object: a %v", tok.Kind())
	}
	m := make(map[string]json.RawMessage, 32)
	for d.PeekKind() != '}' {
		tok, err := d.ReadToken()
		if err != nil {
			return nil, fmt.Errorf("changes: not a JSON object: %w", err)
		}
		name := tok.String() // before the next read, which reuses the token's bytes
		v, err := d.ReadValue()
		if err != nil {
			return nil, fmt.Errorf("changes: not a JSON object: %w", err)
		}
		end := int(d.InputOffset())
		m[name] = raw[end-len(v) : end : end]
	}
	return m, nil
}
