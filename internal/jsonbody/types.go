package jsonbody

import (
	"errors"

	"github.com/go-json-experiment/json"
)

// Int is an integer that accepts any JSON number with an integral value: 3, 3.0 and
// 3e0 decode alike. Number reads it, as it reads every number Canonical writes for
// the idempotency fingerprint, so the two count the same spellings equal.
type Int int

// errNotInteger is reported for a number with a fractional part or out of range.
var errNotInteger = errors.New("must be an integer")

// UnmarshalJSON implements json.Unmarshaler.
func (n *Int) UnmarshalJSON(b []byte) error {
	num, ok := ParseNumber(string(b))
	if !ok {
		return errNotInteger
	}
	v, ok := num.Int()
	if !ok {
		return errNotInteger
	}
	*n = Int(v)
	return nil
}

// Optional is a PATCH member: Set reports whether it was present, Null whether it
// was given as null, Value holds it otherwise.
type Optional[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// UnmarshalJSON implements json.Unmarshaler.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}
