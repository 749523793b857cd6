package apiversion

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
)

// Rendering an answer in an older version touches a member or two of each object
// (docs/api-versions.md): decoding the whole body into maps and encoding it again
// cost twice a page's own rendering. The shallow path below only finds the members'
// byte spans, decodes the members a change names (Change.Members) and writes the
// rest through as they are, in their order.

var errNotObject = errors.New("apiversion: not a JSON object")

// member is one member of a JSON object: its key and its value's bytes.
type member struct {
	key string
	val []byte
}

// skipSpace returns the index of the first non-space byte of b at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index after the JSON value starting at b[i] (no space
// before it). The bytes are an encoder's output, so only the structure is followed.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errNotObject
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1, nil
			}
		}
		return 0, errNotObject
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := skipValue(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errNotObject
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\t' && b[j] != '\r' {
		j++
	}
	if j == i {
		return 0, errNotObject
	}
	return j, nil
}

// members splits a JSON object into its members, in order.
func members(b []byte) ([]member, error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, errNotObject
	}
	var out []member
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return out, nil
	}
	for {
		end, err := skipValue(b, i)
		if err != nil || b[i] != '"' {
			return nil, errNotObject
		}
		var key string
		if err := json.Unmarshal(b[i:end], &key); err != nil {
			return nil, err
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return nil, errNotObject
		}
		i = skipSpace(b, i+1)
		vend, err := skipValue(b, i)
		if err != nil {
			return nil, err
		}
		out = append(out, member{key: key, val: b[i:vend]})
		i = skipSpace(b, vend)
		if i >= len(b) {
			return nil, errNotObject
		}
		if b[i] == '}' {
			return out, nil
		}
		if b[i] != ',' {
			return nil, errNotObject
		}
		i = skipSpace(b, i+1)
	}
}

// elements splits a JSON array into its elements' bytes.
func elements(b []byte) ([][]byte, error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, errNotObject
	}
	var out [][]byte
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return out, nil
	}
	for {
		end, err := skipValue(b, i)
		if err != nil {
			return nil, err
		}
		out = append(out, b[i:end])
		i = skipSpace(b, end)
		if i >= len(b) {
			return nil, errNotObject
		}
		if b[i] == ']' {
			return out, nil
		}
		if b[i] != ',' {
			return nil, errNotObject
		}
		i = skipSpace(b, i+1)
	}
}

// writeObject appends ms as a JSON object.
func writeObject(buf *bytes.Buffer, ms []member) error {
	buf.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return err
		}
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(m.val)
	}
	buf.WriteByte('}')
	return nil
}

// editMembers returns the object b with the members named keys passed through
// t: t sees an Object of those of them b has (decoded as DecodeObject does) and
// edits it in place; what it leaves replaces them, in their places, members it
// removes are dropped and members it adds come last. The other members are kept
// byte for byte. An object with none of keys is passed to t empty.
func editMembers(b []byte, keys []string, t func(Object) error) ([]byte, error) {
	ms, err := members(b)
	if err != nil {
		return nil, err
	}
	obj := Object{}
	for _, m := range ms {
		if slices.Contains(keys, m.key) {
			d := json.NewDecoder(bytes.NewReader(m.val))
			d.UseNumber()
			var v any
			if err := d.Decode(&v); err != nil {
				return nil, err
			}
			obj[m.key] = v
		}
	}
	had := len(obj)
	if err := t(obj); err != nil {
		return nil, err
	}
	if had == 0 && len(obj) == 0 {
		return b, nil
	}
	out := ms[:0:0]
	for _, m := range ms {
		if !slices.Contains(keys, m.key) {
			out = append(out, m)
			continue
		}
		v, ok := obj[m.key]
		if !ok {
			continue
		}
		enc, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out = append(out, member{key: m.key, val: enc})
		delete(obj, m.key)
	}
	added := make([]string, 0, len(obj))
	for k := range obj {
		added = append(added, k)
	}
	slices.Sort(added)
	for _, k := range added {
		enc, err := json.Marshal(obj[k])
		if err != nil {
			return nil, err
		}
		out = append(out, member{key: k, val: enc})
	}
	var buf bytes.Buffer
	buf.Grow(len(b) + 16)
	if err := writeObject(&buf, out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// editMember returns the object b with its member key's value passed through f
// (b as it is without that member).
func editMember(b []byte, key string, f func([]byte) ([]byte, error)) ([]byte, error) {
	ms, err := members(b)
	if err != nil {
		return nil, err
	}
	at := slices.IndexFunc(ms, func(m member) bool { return m.key == key })
	if at < 0 {
		return b, nil
	}
	val, err := f(ms[at].val)
	if err != nil {
		return nil, err
	}
	ms[at].val = val
	var buf bytes.Buffer
	buf.Grow(len(b) + 16)
	if err := writeObject(&buf, ms); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// editElements returns the array b with each element passed through f.
func editElements(b []byte, f func([]byte) ([]byte, error)) ([]byte, error) {
	els, err := elements(b)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(len(b) + 16*len(els))
	buf.WriteByte('[')
	for i, el := range els {
		out, err := f(el)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(out)
	}
	buf.WriteByte(']')
	return buf.Bytes(), nil
}

// shallowMembers returns the members the back transforms (pick) of the changes
// after v on resource touch, and false when one of them does not say (its Members
// is nil): then the whole object must be decoded.
func (s *Set) shallowMembers(v Version, resource string, pick func(Change) Transform) ([]string, bool, error) {
	after, err := s.after(v, resource)
	if err != nil {
		return nil, false, err
	}
	var keys []string
	for _, c := range after {
		if pick(c) == nil {
			continue
		}
		if c.Members == nil {
			return nil, false, nil
		}
		keys = append(keys, c.Members...)
	}
	return keys, true, nil
}

// isPage reports whether b, a JSON object, is a page: its "data" is an array.
func isPage(ms []member) ([]byte, bool) {
	for _, m := range ms {
		if m.key == "data" {
			return m.val, len(m.val) > 0 && m.val[0] == '['
		}
	}
	return nil, false
}

// errDeep says a change on the way does not name its members: the body is
// rendered by decoding it whole.
var errDeep = errors.New("apiversion: a change touches the whole object")

func pickResponse(c Change) Transform { return c.Response }

func pickEvent(c Change) Transform {
	if c.Event != nil {
		return c.Event
	}
	return c.Response
}

// shallowResponse is ResponseBody on the shallow path; false when it cannot take
// body (a change without Members, bytes it does not follow), which the whole
// decode then renders.
func (s *Set) shallowResponse(v Version, resource string, body []byte) ([]byte, bool, error) {
	one := func(ev []byte) ([]byte, error) { return s.shallowEvent(v, ev) }
	if resource != "event" {
		keys, ok, err := s.shallowMembers(v, resource, pickResponse)
		if err != nil {
			return nil, true, err
		}
		if !ok {
			return nil, false, nil
		}
		if len(keys) == 0 {
			return body, true, nil
		}
		one = func(o []byte) ([]byte, error) {
			return editMembers(o, keys, func(obj Object) error { return s.Response(v, resource, obj) })
		}
	}
	ms, err := members(body)
	if err != nil {
		return nil, false, nil
	}
	var out []byte
	if _, page := isPage(ms); page {
		out, err = editMember(body, "data", func(b []byte) ([]byte, error) { return editElements(b, one) })
	} else {
		out, err = one(body)
	}
	if errors.Is(err, errDeep) || errors.Is(err, errNotObject) {
		return nil, false, nil
	}
	return out, true, err
}

// shallowEvent renders one event's bytes in v as EventObject does.
func (s *Set) shallowEvent(v Version, ev []byte) ([]byte, error) {
	ms, err := members(ev)
	if err != nil {
		return nil, err
	}
	var typ string
	for _, m := range ms {
		if m.key == "type" {
			if err := json.Unmarshal(m.val, &typ); err != nil {
				return nil, err
			}
		}
	}
	resource, _, _ := bytes.Cut([]byte(typ), []byte("."))
	keys, ok, err := s.shallowMembers(v, string(resource), pickEvent)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errDeep
	}
	if len(keys) == 0 {
		return ev, nil
	}
	object := func(o []byte) ([]byte, error) {
		if i := skipSpace(o, 0); i >= len(o) || o[i] != '{' {
			return o, nil // null: nothing to render
		}
		return editMembers(o, keys, func(obj Object) error { return s.Event(v, string(resource), obj) })
	}
	return editMember(ev, "data", func(d []byte) ([]byte, error) {
		if i := skipSpace(d, 0); i >= len(d) || d[i] != '{' {
			return d, nil
		}
		d, err := editMember(d, "object", object)
		if err != nil {
			return nil, err
		}
		return editMember(d, "previousAttributes", object)
	})
}
