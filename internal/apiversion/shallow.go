package apiversion

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
)

// Rendering an answer in an older version rewrites a member or two of each object
// (docs/api-versions.md). Decoding a page into maps and encoding it again cost twice
// the page's own rendering; decoding only the members a change touches still cost
// 7–37 % of a list request (docs/performance.md). So a change says how it renders
// a member's encoded value (Change.Members), and an answer is rendered in one pass
// over its bytes: those members' values rendered, every other byte copied as
// written, in its order.

var (
	errNotObject = errors.New("apiversion: not a JSON object")
	// errDeep says a change on the way works only on the decoded object: the body
	// is rendered by decoding it whole.
	errDeep = errors.New("apiversion: a change touches the whole object")
	// errFound stops memberAt's walk at the member it looks for.
	errFound = errors.New("apiversion: member found")
	// errRendered stops an object's walk once its plan's members are rendered.
	errRendered = errors.New("apiversion: members rendered")
)

// MemberRender appends to dst a member's value, given as its Change's Version
// encodes it, as the version before that shows it. The value is valid JSON.
type MemberRender func(dst, value []byte) ([]byte, error)

// valueRender appends the JSON value at the start of b to dst, rendered, and
// returns where in b that value ends.
type valueRender func(dst, b []byte) ([]byte, int, error)

// objectPlan is how an object is rendered: the members that change, each with
// its renderer, every other member copied as written. A plan has a member or two,
// which a look through is quicker to find than a map's hash of every key.
type objectPlan []memberPlan

type memberPlan struct {
	key    string
	render valueRender
}

// member returns the renderer of the member whose key is rawKey (quoted, as
// written), nil for one copied as written.
func (p objectPlan) member(rawKey []byte) valueRender {
	for _, m := range p {
		if keyIs(rawKey, m.key) {
			return m.render
		}
	}
	return nil
}

// render appends the object at the start of b to dst, rendered by p; a value that
// is no object (null) is copied as it is.
func (p objectPlan) render(dst, b []byte) ([]byte, int, error) {
	if len(b) > 0 && b[0] != '{' {
		end, err := skipValue(b, 0)
		return append(dst, b[:end]...), end, err
	}
	pos, rendered := 0, 0 // b[:pos] is in dst
	end, err := walkObject(b, func(rawKey []byte, val int) (int, error) {
		render := p.member(rawKey)
		if render == nil {
			return skipValue(b, val)
		}
		dst = append(dst, b[pos:val]...)
		out, n, err := render(dst, b[val:])
		dst, pos = out, val+n
		if rendered++; rendered == len(p) && err == nil {
			// An encoder writes a member once: the rest needs no look at its keys.
			return pos, errRendered
		}
		return pos, err
	})
	if errors.Is(err, errRendered) {
		end, err = skipNested(b, pos, 1)
	}
	if err != nil {
		return dst, 0, err
	}
	return append(dst, b[pos:end]...), end, nil
}

// renderMembers appends the object obj to dst with each member that members names
// rendered by it (a value that is no object is copied as it is): what a change
// does to an object nested in its resource (an acceptance's riskSnapshot).
func renderMembers(dst, obj []byte, members map[string]MemberRender) ([]byte, error) {
	var p objectPlan
	for key, r := range members {
		p = append(p, memberPlan{key, renderChain([]MemberRender{r})})
	}
	dst, _, err := p.render(dst, obj)
	return dst, err
}

// renderChain renders a member's value by each of renders in turn, the newest
// change first.
func renderChain(renders []MemberRender) valueRender {
	return func(dst, b []byte) ([]byte, int, error) {
		end, err := skipValue(b, 0)
		if err != nil {
			return dst, 0, err
		}
		value := b[:end]
		for _, r := range renders[:len(renders)-1] {
			if value, err = r(nil, value); err != nil {
				return dst, 0, err
			}
		}
		dst, err = renders[len(renders)-1](dst, value)
		return dst, end, err
	}
}

// renderArray appends the array at the start of b to dst, each element rendered by
// element, and returns where it ends in b.
func renderArray(dst, b []byte, element valueRender) ([]byte, int, error) {
	if len(b) == 0 || b[0] != '[' {
		return dst, 0, errNotObject
	}
	pos, i := 0, skipSpace(b, 1)
	if i < len(b) && b[i] == ']' {
		return append(dst, b[:i+1]...), i + 1, nil
	}
	for {
		dst = append(dst, b[pos:i]...)
		out, n, err := element(dst, b[i:])
		if err != nil {
			return dst, 0, err
		}
		dst, pos = out, i+n
		i = skipSpace(b, pos)
		if i >= len(b) {
			return dst, 0, errNotObject
		}
		switch b[i] {
		case ']':
			return append(dst, b[pos:i+1]...), i + 1, nil
		case ',':
			i = skipSpace(b, i+1)
		default:
			return dst, 0, errNotObject
		}
	}
}

// plan returns how an object of resource in the newest version is rendered back to
// v on its bytes: the Members of the changes after v. Nil when no change after v
// renders resource; errDeep when one works only on the decoded object (it has a
// Response, or, for an event, an Event transform of its own).
func (s *Set) plan(v Version, resource string, event bool) (objectPlan, error) {
	after, err := s.after(v, resource)
	if err != nil {
		return nil, err
	}
	chains := map[string][]MemberRender{}
	for _, c := range slices.Backward(after) {
		if c.Response != nil || (event && c.Event != nil) {
			return nil, errDeep
		}
		for key, r := range c.Members {
			chains[key] = append(chains[key], r)
		}
	}
	if len(chains) == 0 {
		return nil, nil
	}
	var p objectPlan
	for key, renders := range chains {
		p = append(p, memberPlan{key, renderChain(renders)})
	}
	return p, nil
}

// renderBody is AppendResponseBody on the bytes: a page ({"data": [...]}) or one
// object, rendered in one pass. Errors: errDeep or errNotObject when the whole
// decode must render body (a change on the way without Members, bytes it does not
// follow), ErrUnknown.
func (s *Set) renderBody(dst []byte, v Version, resource string, body []byte) ([]byte, error) {
	var one valueRender
	if resource == "event" {
		one = s.eventRender(v)
	} else {
		p, err := s.plan(v, resource, false)
		if err != nil || p == nil {
			return append(dst, body...), err
		}
		one = p.render
	}
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, errNotObject
	}
	body = body[i:]
	data, err := memberAt(body, "data")
	if err != nil {
		return nil, err
	}
	if data >= 0 && data < len(body) && body[data] == '[' {
		element := one
		one = objectPlan{{"data", func(dst, b []byte) ([]byte, int, error) { return renderArray(dst, b, element) }}}.render
	}
	dst, end, err := one(slices.Grow(dst, len(body)), body)
	if err != nil {
		return nil, err
	}
	if skipSpace(body, end) != len(body) {
		return nil, errNotObject
	}
	return dst, nil
}

// eventRender renders events in v: each one's data.object and
// data.previousAttributes by the plan of the resource its type names
// ("risk.updated": risk), looked up once per resource.
func (s *Set) eventRender(v Version) valueRender {
	plans := map[string]objectPlan{}
	return func(dst, ev []byte) ([]byte, int, error) {
		typ, err := memberValue(ev, "type")
		if err != nil {
			return dst, 0, err
		}
		var t string
		if typ != nil {
			if err := json.Unmarshal(typ, &t); err != nil {
				return dst, 0, errNotObject
			}
		}
		resource, _, _ := strings.Cut(t, ".")
		p, ok := plans[resource]
		if !ok {
			object, err := s.plan(v, resource, true)
			if err != nil {
				return dst, 0, err
			}
			if object != nil {
				data := objectPlan{{"object", object.render}, {"previousAttributes", object.render}}
				p = objectPlan{{"data", data.render}}
			}
			plans[resource] = p
		}
		return p.render(dst, ev)
	}
}

// memberValue returns the value of the member key of the object b as encoded
// (nil: no such member), reading b only as far as that member.
func memberValue(b []byte, key string) ([]byte, error) {
	at, err := memberAt(b, key)
	if at < 0 || err != nil {
		return nil, err
	}
	end, err := skipValue(b, at)
	return b[at:end], err
}

// memberAt returns where the value of the member key of the object b starts (-1:
// no such member), reading b only as far as that member's key.
func memberAt(b []byte, key string) (int, error) {
	at := -1
	_, err := walkObject(b, func(rawKey []byte, val int) (int, error) {
		if keyIs(rawKey, key) {
			at = val
			return 0, errFound
		}
		return skipValue(b, val)
	})
	if errors.Is(err, errFound) {
		err = nil
	}
	return at, err
}

// walkObject calls f with each member of the object at the start of b, in order:
// its key as written (quoted) and where its value starts; f returns where the value
// ends. It returns where the object ends.
func walkObject(b []byte, f func(rawKey []byte, val int) (int, error)) (int, error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return 0, errNotObject
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, errNotObject
		}
		keyEnd, err := skipString(b, i)
		if err != nil {
			return 0, err
		}
		rawKey := b[i:keyEnd]
		i = skipSpace(b, keyEnd)
		if i >= len(b) || b[i] != ':' {
			return 0, errNotObject
		}
		if i, err = f(rawKey, skipSpace(b, i+1)); err != nil {
			return 0, err
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return 0, errNotObject
		}
		switch b[i] {
		case '}':
			return i + 1, nil
		case ',':
			i = skipSpace(b, i+1)
		default:
			return 0, errNotObject
		}
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

// skipSpace returns the index of the first non-space byte of b at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] (its quote),
// jumping from quote to quote: most of an answer's bytes are in strings.
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			break
		}
		j += q
		escapes := 0 // the backslashes before it: an odd number escapes it
		for b[j-1-escapes] == '\\' {
			escapes++
		}
		if escapes%2 == 0 {
			return j + 1, nil
		}
	}
	return 0, errNotObject
}

// skipValue returns the index after the JSON value starting at b[i] (no space
// before it). The bytes are an encoder's output, so only the structure is followed.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errNotObject
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		return skipNested(b, i+1, 1)
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

// skipNested returns the index after the bracket that closes, from b[i] on, the
// depth objects and arrays b[i] is in.
func skipNested(b []byte, i, depth int) (int, error) {
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			end, err := skipString(b, j)
			if err != nil {
				return 0, err
			}
			j = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return j + 1, nil
			}
		}
	}
	return 0, errNotObject
}

// decodedMembers is a change's Members on a decoded object (the whole decode's
// path): each member they name is encoded, rendered and decoded again.
func decodedMembers(members map[string]MemberRender) Transform {
	return func(obj Object) error {
		for key, render := range members {
			v, ok := obj[key]
			if !ok {
				continue
			}
			enc, err := json.Marshal(v)
			if err != nil {
				return err
			}
			out, err := render(nil, enc)
			if err != nil {
				return err
			}
			d := json.NewDecoder(bytes.NewReader(out))
			d.UseNumber()
			var val any
			if err := d.Decode(&val); err != nil {
				return err
			}
			obj[key] = val
		}
		return nil
	}
}
