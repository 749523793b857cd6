package idempotency

import (
	"bytes"
	"errors"
	"io"
	"math/big"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/go-json-experiment/json/jsontext"
)

// ErrInvalidJSON wraps every reason a body cannot be canonicalised: malformed JSON,
// duplicate object names, invalid UTF-8, lone surrogates, trailing data.
var ErrInvalidJSON = errors.New("invalid JSON")

// CanonicalJSON appends the canonical form of the JSON text data to dst.
//
// The form follows RFC 8785 (JSON Canonicalization Scheme): no insignificant
// whitespace, object members sorted by the UTF-16 code units of their names
// (section 3.2.3), strings in their minimal escaped form (section 3.2.2.2, done by
// jsontext.AppendQuote). It departs from RFC 8785 on numbers, deliberately: RFC 8785
// serialises them as IEEE 754 doubles, which would make 9007199254740993 equal
// 9007199254740992. Here a number is written as its exact decimal value,
// "[-]<digits>e<exponent>" with no leading or trailing zeros in the digits, so 2,
// 2.0 and 2e0 are equal and no two different values are. No Unicode normalisation is
// applied: NFC and NFD spellings stay different.
//
// Parsing is strict (jsontext's defaults): duplicate names, invalid UTF-8 and lone
// surrogates are errors wrapping ErrInvalidJSON.
func CanonicalJSON(dst, data []byte) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	out, err := canonicalValue(dst, dec)
	if err != nil {
		return nil, errors.Join(ErrInvalidJSON, err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		if err == nil {
			err = errors.New("data after the top-level value")
		}
		return nil, errors.Join(ErrInvalidJSON, err)
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
		return appendNumber(dst, string(raw)), nil
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

// appendNumber appends the exact-decimal canonical form of the JSON number literal
// lit (already validated by jsontext): sign, significant digits, exponent.
func appendNumber(dst []byte, lit string) []byte {
	neg := strings.HasPrefix(lit, "-")
	lit = strings.TrimPrefix(lit, "-")
	mant, expStr, _ := strings.Cut(strings.ToLower(lit), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return append(dst, '0') // -0, 0.0 and 0e5 are all zero
	}
	trimmed := strings.TrimRight(digits, "0")
	exp := new(big.Int)
	if expStr != "" {
		exp.SetString(strings.TrimPrefix(expStr, "+"), 10) // jsontext validated it
	}
	exp.Sub(exp, big.NewInt(int64(len(frac))))
	exp.Add(exp, big.NewInt(int64(len(digits)-len(trimmed))))
	if neg {
		dst = append(dst, '-')
	}
	dst = append(dst, trimmed...)
	dst = append(dst, 'e')
	return exp.Append(dst, 10)
}
