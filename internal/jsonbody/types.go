package jsonbody

import (
	"errors"
	"math/big"

	"github.com/go-json-experiment/json"
)

// Int is an integer that accepts any JSON number with an integral value: 3, 3.0 and
// 3e0 decode alike, matching the idempotency fingerprint, which counts them equal.
type Int int

// errNotInteger is reported for a number with a fractional part or out of range.
var errNotInteger = errors.New("must be an integer")

// UnmarshalJSON implements json.Unmarshaler.
func (n *Int) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || !(b[0] == '-' || (b[0] >= '0' && b[0] <= '9')) {
		return errNotInteger
	}
	r, ok := new(big.Rat).SetString(string(b))
	if !ok || !r.IsInt() || !r.Num().IsInt64() || r.Num().Int64() != int64(int(r.Num().Int64())) {
		return errNotInteger
	}
	*n = Int(r.Num().Int64())
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
