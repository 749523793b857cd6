package jsonbody

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"unicode/utf16"

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
// Parsing is as strict as Unmarshal's (jsontext's defaults): duplicate names, invalid
// UTF-8, lone surrogates and trailing data are errors. Errors: *problem.Problem
// VALIDATION_FAILED naming the member at fault, as Unmarshal names it.
func Canonical(dst, data []byte) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	out, err := canonicalValue(dst, dec)
	if err != nil {
		return nil, explain(err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		if err != nil {
			return nil, explain(err)
		}
		return nil, problem.Invalid("body", "is not valid JSON: data after the top-level value")
	}
	return out, nil
}

type member struct {
	name  []uint16
	value []byte // canonical name and value, "name":value
}

func canonicalValue(dst []byte, dec *jsontext.Decoder) ([]byte, error) {
	switch dec.PeekKind() {
	case '0':
		raw, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		n, ok := ParseNumber(string(raw))
		if !ok { // jsontext validated it; a disagreement must not pass silently
			return nil, errors.New("invalid number " + string(raw))
		}
		return n.Append(dst), nil
	case '{':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		var members []member
		for dec.PeekKind() != '}' {
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			name := tok.String()
			buf, err := jsontext.AppendQuote(nil, name)
			if err != nil {
				return nil, err
			}
			buf = append(buf, ':')
			if buf, err = canonicalValue(buf, dec); err != nil {
				return nil, err
			}
			members = append(members, member{name: utf16.Encode([]rune(name)), value: buf})
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		slices.SortFunc(members, func(a, b member) int { return slices.Compare(a.name, b.name) })
		dst = append(dst, '{')
		for i, m := range members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, m.value...)
		}
		return append(dst, '}'), nil
	case '[':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		dst = append(dst, '[')
		for i := 0; dec.PeekKind() != ']'; i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = canonicalValue(dst, dec); err != nil {
				return nil, err
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		return append(dst, ']'), nil
	default:
		// Strings, literals — and the invalid kind 0, whose ReadToken yields the error.
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		switch tok.Kind() {
		case '"':
			return jsontext.AppendQuote(dst, tok.String())
		case 'n', 't', 'f':
			return append(dst, tok.String()...), nil
		}
		return nil, errors.New("unexpected " + tok.Kind().String())
	}
}
