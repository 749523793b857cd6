package changes

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// Members returns the top-level members of v's JSON form (nil for a nil v). Errors:
// v does not marshal to a JSON object (or null).
func Members(v any) (map[string]json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("changes: encode: %w", err)
	}
	if m, ok := split(raw); ok {
		return m, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("changes: not a JSON object: %w", err)
	}
	return m, nil
}

// split cuts raw, an object as json.Marshal writes it (valid and compact), into its
// members, each value a slice of raw; false for anything else — a key with an
// escape, a value that is no object — which json.Unmarshal then reads. Every write
// splits its views (the audit entry's diff, an event's previousAttributes), and
// json.Unmarshal's reflection into a map was the largest part of that
// (docs/performance.md, issue 44).
func split(raw []byte) (map[string]json.RawMessage, bool) {
	if string(raw) == "null" {
		return nil, true
	}
	if len(raw) < 2 || raw[0] != '{' || raw[len(raw)-1] != '}' {
		return nil, false
	}
	m := make(map[string]json.RawMessage, 32)
	i := 1
	if raw[i] == '}' {
		return m, i == len(raw)-1
	}
	for {
		if raw[i] != '"' {
			return nil, false
		}
		end := bytes.IndexByte(raw[i+1:], '"')
		if end < 0 {
			return nil, false
		}
		key := raw[i+1 : i+1+end]
		if bytes.IndexByte(key, '\\') >= 0 {
			return nil, false
		}
		i += end + 2
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		i++
		start := i
		if i = valueEnd(raw, i); i <= start || i >= len(raw) {
			return nil, false
		}
		m[string(key)] = raw[start:i:i]
		switch raw[i] {
		case ',':
			i++
		case '}':
			return m, i == len(raw)-1
		default:
			return nil, false
		}
	}
}

// valueEnd returns where the value that begins at raw[i] ends: the index of the ','
// or '}' that follows it at the object's depth (len(raw) when none does).
func valueEnd(raw []byte, i int) int {
	depth, inString := 0, false
	for ; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case ']':
			depth--
		case '}':
			if depth == 0 {
				return i
			}
			depth--
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}
