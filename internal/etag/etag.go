// Package etag reads and writes the entity tags of conditional requests
// (RFC 9110 section 8.8.3 for the syntax, 13.1.1 If-Match, 13.1.2 If-None-Match).
// It knows nothing of what a tag stands for, save StaleDetail, which words the 412
// for resources tagged by their version (riskapi's risks, actions and endpoints).
package etag

import (
	"errors"
	"net/http"
	"strings"
)

// Tag is one entity tag.
type Tag struct {
	Weak   bool   // W/"…"
	Opaque string // the text between the quotes
}

// String returns t as sent in a header: "3" or W/"3".
func (t Tag) String() string {
	s := `"` + t.Opaque + `"`
	if t.Weak {
		s = "W/" + s
	}
	return s
}

// Strong returns the strong tag with opaque text o, ready for an ETag header.
func Strong(o string) string { return Tag{Opaque: o}.String() }

// List is the value of an If-Match or If-None-Match header: "*" or tags.
type List struct {
	Any  bool
	Tags []Tag
}

// ErrSyntax: the header is neither "*" nor a comma-separated list of entity tags.
var ErrSyntax = errors.New(`must be "*" or a comma-separated list of entity tags such as "3"`)

// FromHeader reads every field line of header name in h as one list. It reports
// false when h has no such field. Errors: ErrSyntax.
func FromHeader(h http.Header, name string) (List, bool, error) {
	vals := h.Values(name)
	if len(vals) == 0 {
		return List{}, false, nil
	}
	l, err := Parse(strings.Join(vals, ","))
	return l, true, err
}

// Parse reads a field value: "*", or one or more entity tags separated by commas
// (empty list elements allowed, as RFC 9110 section 5.6.1 requires). Errors:
// ErrSyntax.
func Parse(v string) (List, error) {
	if strings.TrimSpace(v) == "*" {
		return List{Any: true}, nil
	}
	var l List
	rest := v
	for {
		rest = strings.TrimLeft(rest, " \t,")
		if rest == "" {
			break
		}
		var t Tag
		if strings.HasPrefix(rest, "W/") {
			t.Weak, rest = true, rest[2:]
		}
		if !strings.HasPrefix(rest, `"`) {
			return List{}, ErrSyntax
		}
		end := strings.IndexByte(rest[1:], '"')
		if end < 0 {
			return List{}, ErrSyntax
		}
		t.Opaque, rest = rest[1:end+1], rest[end+2:]
		if !opaque(t.Opaque) {
			return List{}, ErrSyntax
		}
		l.Tags = append(l.Tags, t)
		if r := strings.TrimLeft(rest, " \t"); r != "" && r[0] != ',' {
			return List{}, ErrSyntax
		}
	}
	if len(l.Tags) == 0 {
		return List{}, ErrSyntax
	}
	return l, nil
}

// opaque reports whether s holds only etagc characters (%x21 / %x23-7E / obs-text).
func opaque(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c == '"' || c == 0x7f {
			return false
		}
	}
	return true
}

// MatchStrong reports whether l names the current tag o by strong comparison, as
// If-Match requires: a weak tag never matches. "*" matches anything.
func (l List) MatchStrong(o string) bool { return l.match(o, false) }

// MatchWeak reports whether l names the current tag o by weak comparison, as
// If-None-Match requires. "*" matches anything.
func (l List) MatchWeak(o string) bool { return l.match(o, true) }

func (l List) match(o string, weakToo bool) bool {
	if l.Any {
		return true
	}
	for _, t := range l.Tags {
		if t.Opaque == o && (weakToo || !t.Weak) {
			return true
		}
	}
	return false
}

// IfMatch is FromHeader of a request's If-Match: the one place it is read, for
// every write that honours it (a risk's, an action's), so a precondition and the
// 412 refusing it cannot read the header differently.
func IfMatch(h http.Header) (List, bool, error) { return FromHeader(h, "If-Match") }
