package jsonbody

import (
	"errors"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
)

// Int is an integer that accepts any JSON number with an integral value: 3, 3.0 and
// 3e0 decode alike, matching the idempotency fingerprint, which counts them equal.
type Int int

// errNotInteger is reported for a number with a fractional part or out of range.
var errNotInteger = errors.New("must be an integer")

// UnmarshalJSON implements json.Unmarshaler.
func (n *Int) UnmarshalJSON(b []byte) error {
	v, ok := parseInt(string(b))
	if !ok {
		return errNotInteger
	}
	*n = Int(v)
	return nil
}

// parseInt returns the value of the JSON number s when it is an integer that fits an
// int. It reads the decimal text in linear time: math/big would take seconds over a
// megabyte of digits, which any client could send.
func parseInt(s string) (int, bool) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	mant, expStr, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	// The value is digits × 10^exp.
	exp := -len(frac)
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	digits = trimmed
	if digits == "" {
		return 0, true // any spelling of zero
	}
	if hasExp {
		e, err := strconv.Atoi(expStr)
		if err != nil || e > 1000 || e < -1000 {
			return 0, false // far beyond int in either direction
		}
		exp += e
	}
	if exp < 0 || len(digits)+exp > 19 {
		return 0, false // a fraction, or more digits than an int64 holds
	}
	v, err := strconv.ParseInt(digits+strings.Repeat("0", exp), 10, 64)
	if err != nil || int64(int(v)) != v {
		return 0, false
	}
	if neg {
		v = -v
	}
	return int(v), true
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
