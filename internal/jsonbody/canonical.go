package jsonbody

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/riskapi/riskapi/internal/problem"
)

// Canonical appends the canonical form of the JSON text data to dst: what the
// idempotency fingerprint hashes for a JSON body (docs/idempotency.md).
//
// The form follows RFC 8785 (JSON Canonicalization Scheme): no insignificant
// whitespace, object members sorted by the UTF-16 code units of their names
// (section 3.2.3), strings in their minimal escaped form (section 3.2.2.2, done by
// jsontext.AppendQuote). It departs from RFC 8785 on numbers, deliberately: RFC 8785
// serialises them as IEEE 754 doubles, which would make 9007199254740993 equal
// 9007199254740992. Here a number is written as its exact decimal value
// (Number.Append), so 2, 2.0 and 2e0 are equal and no two different values are —
// the same equality Int decodes by. No Unicode normalisation is applied: NFC and NFD
// spellings stay different. That departure is why this is our own code and not a
// JCS library: those round numbers through a double.
//
// The work is linear in the size of data whatever its shape: every scalar and member
// name is written once, in reading order, to one buffer, and an object's members are
// put in order by sorting references to their parts, never by copying their text, so
// deep nesting costs no more than a flat body (docs/idempotency.md). The result is
// assembled from those parts in one walk at the end.
//
// Parsing is as strict as Unmarshal's (jsontext's defaults): duplicate names, invalid
// UTF-8, lone surrogates and trailing data are errors. Errors: *problem.Problem
// VALIDATION_FAILED naming the member at fault, as Unmarshal names it.
func Canonical(dst, data []byte) ([]byte, error) {
	b, err := build(data)
	if err != nil {
		return nil, err
	}
	defer b.release()
	return b.emit(slices.Grow(dst, len(b.text)+b.braces), b.top, nil)
}

// WriteCanonical writes Canonical's form of data to w (a hash, say) in pieces,
// without holding it whole. Errors: as Canonical's, or w's.
func WriteCanonical(w io.Writer, data []byte) error {
	b, err := build(data)
	if err != nil {
		return err
	}
	defer b.release()
	// emit's buffer is the builder's own, kept from one body to the next, and sized
	// to the form (len(text)+braces, exact) up to two chunks: a fresh 64 KiB buffer
	// per body, zeroed and collected, was most of what a replay allocated
	// (docs/performance.md, issue 26, "What a replay costs").
	buf, err := b.emit(slices.Grow(b.out[:0], min(len(b.text)+b.braces, 2*emitChunk)), b.top, w)
	if err == nil {
		_, err = w.Write(buf)
	}
	b.out = buf
	return err
}

// emitChunk is how much emit gathers before it writes to a writer.
const emitChunk = 32 << 10

// build validates data and reads it into a builder from builders, whose top is then
// the whole text's parts. Errors: *problem.Problem VALIDATION_FAILED.
func build(data []byte) (*builder, error) {
	b := builders.Get().(*builder)
	// jsontext validates the whole text first (syntax, UTF-8, surrogates, nesting):
	// the scan below then reads text known to be valid, and finds duplicate names
	// where it sorts each object's members anyway (jsontext's own check costs more
	// than the rest of its work on a deep body).
	b.rd.Reset(data)
	b.dec.Reset(b.rd, jsontext.AllowDuplicateNames(true))
	var err error
	if _, err = b.dec.ReadValue(); err == nil {
		if _, err = b.dec.ReadToken(); err == nil {
			err = problem.Invalid("body", "is not valid JSON: data after the top-level value")
		} else if err == io.EOF {
			err = nil
		}
	}
	if err == nil {
		b.in = data
		b.presize(data)
		err = b.read()
		b.top = b.flush(0)
	}
	if err != nil {
		b.release()
		if p, ok := err.(*problem.Problem); ok {
			return nil, p
		}
		return nil, explain(err)
	}
	return b, nil
}

// builders keeps builders, and the memory they grew, from one body to the next: a
// large body costs its allocations once, not on every request.
var builders = sync.Pool{New: func() any {
	rd := bytes.NewReader(nil)
	return &builder{rd: rd, dec: jsontext.NewDecoder(rd)}
}}

// release empties b and puts it back in builders; one grown past maxKept is dropped.
func (b *builder) release() {
	const maxKept = 4 << 20
	if cap(b.text) > maxKept {
		return
	}
	out := b.out[:0]
	if cap(out) > 2*emitChunk { // grown past a chunk by one long scalar: not kept
		out = nil
	}
	b.rd.Reset(nil)
	b.dec.Reset(b.rd)
	*b = builder{rd: b.rd, dec: b.dec, text: b.text[:0], names: b.names[:0], parts: b.parts[:0],
		members: b.members[:0], open: b.open[:0], openMembers: b.openMembers[:0], stack: b.stack[:0], out: out}
	builders.Put(b)
}

// builder reads one JSON text into text (canonical scalars, member names and array
// punctuation, in reading order), and parts and members (every object's members,
// sorted, each a run of parts), which emit then assembles. A list of parts under
// construction (the whole text's, or one member's) lives on top of the scratch stack
// open, and an object's members on top of openMembers: a nested list is complete,
// and moved to parts or members, before the one around it grows again. Nothing is
// allocated per value.
type builder struct {
	rd          *bytes.Reader
	dec         *jsontext.Decoder
	in          []byte // the JSON text, validated
	pos         int    // where reading is in in
	text        []byte // canonical text, in reading order
	names       []byte // members' names, unquoted: the sort keys
	parts       []part
	members     []member
	open        []part
	openMembers []member
	stack       []frame
	top         span   // the whole text's parts, once read
	braces      int    // what emit adds to text: braces and commas of objects
	out         []byte // WriteCanonical's buffer for emit, at most 2*emitChunk kept
}

// span is the run [lo, hi) of a builder slice.
type span struct{ lo, hi int }

// part is a piece of canonical form: text[lo:hi] or, when isObj, the object whose
// members are members[lo:hi].
type part struct {
	span
	isObj bool
}

// member is an object's member: its name, names[name.lo:name.hi] (the sort key),
// and its canonical form, `"name":` and its value, parts[parts.lo:parts.hi].
type member struct{ name, parts span }

// presize grows the buffers once for data: each member has a colon, and takes a
// member and at most two parts (its own, and one after an object inside it), so the
// colons bound them (a colon inside a string only overestimates).
func (b *builder) presize(data []byte) {
	n := bytes.Count(data, []byte{':'})
	b.text = slices.Grow(b.text, len(data))
	b.members = slices.Grow(b.members, n)
	b.parts = slices.Grow(b.parts, 2*n+1)
}

// written adds text[lo:], written just now, to the open list, extending its last
// part when that ends at lo.
func (b *builder) written(lo int) {
	if n := len(b.open); n > 0 && !b.open[n-1].isObj && b.open[n-1].hi == lo {
		b.open[n-1].hi = len(b.text)
		return
	}
	b.open = append(b.open, part{span: span{lo, len(b.text)}})
}

// flush moves the open list that starts at base to parts and returns where it went.
func (b *builder) flush(base int) span {
	lo := len(b.parts)
	b.parts = append(b.parts, b.open[base:]...)
	b.open = b.open[:base]
	return span{lo, len(b.parts)}
}

// frame is an object or array read is inside: for an object, where its members
// start on openMembers, and the name of the member being read and where its parts
// start on open (base; -1 between members).
type frame struct {
	obj   bool
	first int
	name  span
	base  int
	item  int // arrays: the index of the item being read
}

// read reads the (validated) JSON text in, without recursion: a body nested
// thousands deep costs no deeper stack. After each complete value it closes the
// containers that end there and moves on to the next member or item.
func (b *builder) read() error {
	for {
		c := b.skipSpace()
		switch c {
		case '{', '[':
			b.pos++
			b.stack = append(b.stack, frame{obj: c == '{', first: len(b.openMembers), base: -1})
			if c == '[' {
				b.text = append(b.text, '[')
				b.written(len(b.text) - 1)
			}
			if end := b.skipSpace(); end == '}' || end == ']' {
				break // empty: closed below
			}
			if c == '{' {
				b.memberName()
			}
			continue
		default:
			if err := b.scalar(c); err != nil {
				return err
			}
		}
		if done, err := b.closeValues(); done || err != nil {
			return err
		}
	}
}

// closeValues follows a complete value: it ends the member it was the value of, and
// closes every container that ends after it, until one continues (it reads the next
// member's name) or the text ends (true). Errors: a duplicate name (closeObject).
func (b *builder) closeValues() (bool, error) {
	for len(b.stack) > 0 {
		top := &b.stack[len(b.stack)-1]
		if top.obj && top.base >= 0 { // the value ends the member being read
			b.openMembers = append(b.openMembers, member{name: top.name, parts: b.flush(top.base)})
			top.base = -1
		}
		if b.skipSpace() == ',' {
			b.pos++
			if top.obj {
				b.memberName()
			} else {
				top.item++
				b.text = append(b.text, ',')
				b.written(len(b.text) - 1)
			}
			return false, nil
		}
		b.pos++ // '}' or ']'
		if top.obj {
			if err := b.closeObject(top.first); err != nil {
				return false, err
			}
		} else {
			b.text = append(b.text, ']')
			b.written(len(b.text) - 1)
		}
		b.stack = b.stack[:len(b.stack)-1]
	}
	return true, nil
}

// scalar reads the string, number or literal that starts with c.
func (b *builder) scalar(c byte) error {
	lo := len(b.text)
	switch c {
	case '"':
		var err error
		if b.text, err = appendString(b.text, b.str()); err != nil {
			return err
		}
	case 't', 'n':
		b.text = append(b.text, b.in[b.pos:b.pos+4]...)
		b.pos += 4
	case 'f':
		b.text = append(b.text, b.in[b.pos:b.pos+5]...)
		b.pos += 5
	default:
		start := b.pos
		for b.pos < len(b.in) && strings.IndexByte("+-.0123456789Ee", b.in[b.pos]) >= 0 {
			b.pos++
		}
		n, ok := ParseNumber(string(b.in[start:b.pos]))
		if !ok { // jsontext validated it; a disagreement must not pass silently
			return errors.New("invalid number " + string(b.in[start:b.pos]))
		}
		b.text = n.Append(b.text)
	}
	b.written(lo)
	return nil
}

// skipSpace moves past whitespace and returns the next byte (0 at the end).
func (b *builder) skipSpace() byte {
	for ; b.pos < len(b.in); b.pos++ {
		switch c := b.in[b.pos]; c {
		case ' ', '\t', '\n', '\r':
		default:
			return c
		}
	}
	return 0
}

// str reads the string at pos, quotes included, as it is written.
func (b *builder) str() []byte {
	start := b.pos
	end := start + 1 + bytes.IndexByte(b.in[start+1:], '"')
	if bytes.IndexByte(b.in[start+1:end], '\\') >= 0 { // escapes: an escaped quote may come first
		for end = start + 1; b.in[end] != '"'; end++ {
			if b.in[end] == '\\' {
				end++
			}
		}
	}
	b.pos = end + 1
	return b.in[start:b.pos]
}

// appendString appends the canonical form of raw, a JSON string as it was read
// (validated): raw itself when it has no escape, since jsontext.AppendQuote
// escapes only what a JSON string cannot hold as is; otherwise its value, quoted
// again in the minimal form.
func appendString(dst, raw []byte) ([]byte, error) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return append(dst, raw...), nil
	}
	v, err := jsontext.AppendUnquote(nil, raw)
	if err != nil {
		return nil, err
	}
	return jsontext.AppendQuote(dst, v)
}

// memberName reads a member's name and colon, writes `"name":` as the first part
// of the member's own list and keeps the name, unquoted, as its sort key.
func (b *builder) memberName() {
	b.skipSpace()
	lo := len(b.text)
	raw := b.str()
	b.text, _ = appendString(b.text, raw) // validated: cannot fail
	top := &b.stack[len(b.stack)-1]
	top.name = span{lo: len(b.names)}
	if bytes.IndexByte(raw, '\\') < 0 {
		b.names = append(b.names, raw[1:len(raw)-1]...)
	} else {
		b.names, _ = jsontext.AppendUnquote(b.names, raw)
	}
	top.name.hi = len(b.names)
	b.skipSpace()
	b.pos++ // the colon
	b.text = append(b.text, ':')
	top.base = len(b.open)
	b.open = append(b.open, part{span: span{lo, len(b.text)}})
}

// closeObject sorts the members of the object that ends here (from first on
// openMembers), moves them to members and appends a reference to it to the open
// list. Errors: *problem.Problem VALIDATION_FAILED naming a member that appears
// twice, as Unmarshal names it.
func (b *builder) closeObject(first int) error {
	ms := b.openMembers[first:]
	name := func(m member) []byte { return b.names[m.name.lo:m.name.hi] }
	slices.SortFunc(ms, func(x, y member) int { return compareUTF16(name(x), name(y)) })
	for i := 1; i < len(ms); i++ {
		if bytes.Equal(name(ms[i-1]), name(ms[i])) {
			return problem.Invalid(b.path(string(name(ms[i]))), "appears more than once")
		}
	}
	obj := span{lo: len(b.members)}
	b.members = append(b.members, ms...)
	obj.hi = len(b.members)
	b.openMembers = b.openMembers[:first]
	b.braces += len(ms) + 2
	b.open = append(b.open, part{span: obj, isObj: true})
	return nil
}

// path is the field name of member name of the innermost object being read: the
// names and indices that lead to it, joined by "/" (as pointerField writes a JSON
// pointer).
func (b *builder) path(name string) string {
	var segs []string
	for _, f := range b.stack[:len(b.stack)-1] {
		if f.obj {
			segs = append(segs, string(b.names[f.name.lo:f.name.hi]))
		} else {
			segs = append(segs, strconv.Itoa(f.item))
		}
	}
	return shortField(strings.Join(append(segs, name), "/"))
}

// compareUTF16 orders two names by their UTF-16 code units (RFC 8785 section
// 3.2.3) without converting them: UTF-8 byte order is code point order, which
// differs from UTF-16 order only between U+E000..U+FFFF and the code points past
// U+FFFF, which UTF-16 writes as surrogates (U+D800..U+DFFF) and so sorts first.
func compareUTF16(x, y []byte) int {
	i := 0
	for i < len(x) && i < len(y) && x[i] == y[i] {
		i++
	}
	if i == len(x) || i == len(y) {
		return len(x) - len(y)
	}
	for i > 0 && !utf8.RuneStart(x[i]) { // back to the start of the differing runes
		i--
	}
	rx, _ := utf8.DecodeRune(x[i:])
	ry, _ := utf8.DecodeRune(y[i:])
	return cmp.Compare(utf16Key(rx), utf16Key(ry))
}

// utf16Key is a key that orders code points as their UTF-16 encodings do: U+E000..
// U+FFFF move above every code point past U+FFFF, whose surrogates sort below them.
func utf16Key(r rune) rune {
	if r >= 0xE000 && r <= 0xFFFF {
		return r + 0x200000
	}
	return r
}

// emit appends the canonical form made of the parts ps to dst, without recursion:
// a stack of cursors, each over a run of parts or of an object's members. With a
// writer w, it writes what it gathered to w whenever that passes emitChunk, and
// returns the rest. Errors: w's.
func (b *builder) emit(dst []byte, ps span, w io.Writer) ([]byte, error) {
	type cursor struct {
		run   span // parts, or members when obj
		obj   bool
		first int // obj: the run's first member (no comma before it)
	}
	stack := []cursor{{run: ps}}
	for len(stack) > 0 {
		if w != nil && len(dst) >= emitChunk {
			if _, err := w.Write(dst); err != nil {
				return nil, err
			}
			dst = dst[:0]
		}
		c := &stack[len(stack)-1]
		switch {
		case c.run.lo == c.run.hi:
			if c.obj {
				dst = append(dst, '}')
			}
			stack = stack[:len(stack)-1]
		case c.obj:
			if c.run.lo > c.first {
				dst = append(dst, ',')
			}
			m := b.members[c.run.lo]
			c.run.lo++
			stack = append(stack, cursor{run: m.parts})
		default:
			p := b.parts[c.run.lo]
			c.run.lo++
			if !p.isObj {
				dst = append(dst, b.text[p.lo:p.hi]...)
				continue
			}
			dst = append(dst, '{')
			stack = append(stack, cursor{run: p.span, obj: true, first: p.lo})
		}
	}
	return dst, nil
}
