package apiversion

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Rendering an answer in an older version touches a member or two of each object
// (docs/api-versions.md): decoding the whole body into maps and encoding it again
// cost twice a page's own rendering. The shallow path below only finds the members'
// byte spans, decodes the members a change names (Change.Members) and writes the
// rest through as they are, in their order.

var errNotObject = errors.New("apiversion: not a JSON object")

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

// eachMember calls f with each member of the JSON object b, in order: where its
// key starts, the key as written (quoted), and its value's span.
func eachMember(b []byte, f func(at int, rawKey []byte, val, valEnd int) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errNotObject
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for {
		end, err := skipValue(b, i)
		if err != nil || b[i] != '"' {
			return errNotObject
		}
		at, rawKey := i, b[i:end]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return errNotObject
		}
		i = skipSpace(b, i+1)
		vend, err := skipValue(b, i)
		if err != nil {
			return err
		}
		if err := f(at, rawKey, i, vend); err != nil {
			return err
		}
		i = skipSpace(b, vend)
		if i >= len(b) {
			return errNotObject
		}
		if b[i] == '}' {
			return nil
		}
		if b[i] != ',' {
			return errNotObject
		}
		i = skipSpace(b, i+1)
	}
}

// keyIs reports whether rawKey, a quoted key, is k.
func keyIs(rawKey []byte, k string) bool {
	if bytes.IndexByte(rawKey, '\\') < 0 {
		return len(rawKey) == len(k)+2 && string(rawKey[1:len(rawKey)-1]) == k
	}
	var key string
	return json.Unmarshal(rawKey, &key) == nil && key == k
}

// decodeValue decodes one value as DecodeObject does (numbers as json.Number).
func decodeValue(b []byte) (any, error) {
	if !hasNumber(b) {
		// Nothing json.Number would keep: the plain decode, a third of the cost.
		var v any
		err := json.Unmarshal(b, &v)
		return v, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// hasNumber reports whether the JSON value b holds a number outside its strings.
func hasNumber(b []byte) bool {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			end, err := skipValue(b, i)
			if err != nil {
				return true
			}
			i = end - 1
		case c == '-' || (c >= '0' && c <= '9'):
			return true
		}
	}
	return false
}

// writeMember appends "key":value.
func writeMember(dst *bytes.Buffer, key string, v any) error {
	k, err := json.Marshal(key)
	if err != nil {
		return err
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dst.Write(k)
	dst.WriteByte(':')
	dst.Write(enc)
	return nil
}

// renderObject appends the object b to dst with the members named keys passed
// through t: t sees an Object of those of them b has (decoded as DecodeObject
// does) and edits it in place; what it leaves replaces them in their places and
// members it adds come last. The other bytes are copied as they are. A member t
// removes is errDeep: the whole decode renders it.
func renderObject(dst *bytes.Buffer, b []byte, keys []string, t func(Object) error) error {
	type span struct {
		key     string
		at, end int
	}
	var spans [4]span
	touched, n := spans[:0], 0
	obj := Object{}
	err := eachMember(b, func(at int, rawKey []byte, val, end int) error {
		n++
		for _, k := range keys {
			if keyIs(rawKey, k) {
				v, err := decodeValue(b[val:end])
				if err != nil {
					return err
				}
				obj[k] = v
				touched = append(touched, span{k, at, end})
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	had := len(obj)
	if err := t(obj); err != nil {
		return err
	}
	if had == 0 && len(obj) == 0 {
		dst.Write(b)
		return nil
	}
	pos := 0
	for _, s := range touched {
		v, ok := obj[s.key]
		if !ok {
			return errDeep
		}
		dst.Write(b[pos:s.at])
		if err := writeMember(dst, s.key, v); err != nil {
			return err
		}
		delete(obj, s.key)
		pos = s.end
	}
	if len(obj) == 0 {
		dst.Write(b[pos:])
		return nil
	}
	closing := bytes.LastIndexByte(b, '}')
	dst.Write(b[pos:closing])
	added := make([]string, 0, len(obj))
	for k := range obj {
		added = append(added, k)
	}
	slices.Sort(added)
	for _, k := range added {
		if n > 0 {
			dst.WriteByte(',')
		}
		n++
		if err := writeMember(dst, k, obj[k]); err != nil {
			return err
		}
	}
	dst.Write(b[closing:])
	return nil
}

// renderMember appends the object b to dst with its member key's value rendered
// by f (b as it is without that member).
func renderMember(dst *bytes.Buffer, b []byte, key string, f func(dst *bytes.Buffer, val []byte) error) error {
	pos := 0
	err := eachMember(b, func(_ int, rawKey []byte, val, end int) error {
		if pos > 0 || !keyIs(rawKey, key) {
			return nil
		}
		dst.Write(b[:val])
		pos = end
		return f(dst, b[val:end])
	})
	if err != nil {
		return err
	}
	dst.Write(b[pos:])
	return nil
}

// renderElements appends the array b to dst with each element rendered by f.
func renderElements(dst *bytes.Buffer, b []byte, f func(dst *bytes.Buffer, el []byte) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return errNotObject
	}
	pos := 0
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		dst.Write(b)
		return nil
	}
	for {
		end, err := skipValue(b, i)
		if err != nil {
			return err
		}
		dst.Write(b[pos:i])
		if err := f(dst, b[i:end]); err != nil {
			return err
		}
		pos = end
		i = skipSpace(b, end)
		if i >= len(b) {
			return errNotObject
		}
		if b[i] == ']' {
			dst.Write(b[pos:])
			return nil
		}
		if b[i] != ',' {
			return errNotObject
		}
		i = skipSpace(b, i+1)
	}
}

// isObject reports whether b is a JSON object (not null).
func isObject(b []byte) bool {
	i := skipSpace(b, 0)
	return i < len(b) && b[i] == '{'
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
	one := func(dst *bytes.Buffer, ev []byte) error { return s.renderEvent(dst, v, ev) }
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
		back, err := s.backOnce(v, resource, pickResponse)
		if err != nil {
			return nil, true, err
		}
		one = func(dst *bytes.Buffer, o []byte) error { return renderObject(dst, o, keys, back) }
	}
	page := false
	if err := eachMember(body, func(_ int, rawKey []byte, val, _ int) error {
		if keyIs(rawKey, "data") && body[val] == '[' {
			page = true
		}
		return nil
	}); err != nil {
		return nil, false, nil
	}
	var dst bytes.Buffer
	dst.Grow(len(body) + len(body)/8)
	var err error
	if page {
		err = renderMember(&dst, body, "data", func(dst *bytes.Buffer, b []byte) error { return renderElements(dst, b, one) })
	} else {
		err = one(&dst, body)
	}
	if errors.Is(err, errDeep) || errors.Is(err, errNotObject) {
		return nil, false, nil
	}
	return dst.Bytes(), true, err
}

// shallowEvent renders one event's bytes in v as EventObject does.
func (s *Set) shallowEvent(v Version, ev []byte) ([]byte, error) {
	var dst bytes.Buffer
	dst.Grow(len(ev) + 64)
	if err := s.renderEvent(&dst, v, ev); err != nil {
		return nil, err
	}
	return dst.Bytes(), nil
}

// renderEvent appends one event rendered in v to dst.
func (s *Set) renderEvent(dst *bytes.Buffer, v Version, ev []byte) error {
	var typ string
	err := eachMember(ev, func(_ int, rawKey []byte, val, end int) error {
		if keyIs(rawKey, "type") {
			return json.Unmarshal(ev[val:end], &typ)
		}
		return nil
	})
	if err != nil {
		return err
	}
	resource, _, _ := strings.Cut(typ, ".")
	keys, ok, err := s.shallowMembers(v, resource, pickEvent)
	if err != nil {
		return err
	}
	if !ok {
		return errDeep
	}
	if len(keys) == 0 {
		dst.Write(ev)
		return nil
	}
	object := func(dst *bytes.Buffer, o []byte) error {
		if !isObject(o) {
			dst.Write(o) // null: nothing to render
			return nil
		}
		return renderObject(dst, o, keys, func(obj Object) error { return s.Event(v, resource, obj) })
	}
	return renderMember(dst, ev, "data", func(dst *bytes.Buffer, d []byte) error {
		if !isObject(d) {
			dst.Write(d)
			return nil
		}
		var inner bytes.Buffer
		if err := renderMember(&inner, d, "object", object); err != nil {
			return err
		}
		return renderMember(dst, inner.Bytes(), "previousAttributes", object)
	})
}

// backOnce is Response (or Event, by pick) with the changes after v looked up once,
// for the many objects of a page.
func (s *Set) backOnce(v Version, resource string, pick func(Change) Transform) (Transform, error) {
	after, err := s.after(v, resource)
	if err != nil {
		return nil, err
	}
	return func(obj Object) error {
		for _, c := range slices.Backward(after) {
			if t := pick(c); t != nil {
				if err := t(obj); err != nil {
					return fmt.Errorf("apiversion: back to %s (%s): %w", v, c.Version, err)
				}
			}
		}
		return nil
	}, nil
}
