package jsonbody

import (
	"strconv"
	"strings"
)

// Number is the exact value of a JSON number literal, (-1)^Neg × Digits × 10^Exp,
// in a normal form: two literals have equal Numbers exactly when they denote the same
// value (2, 2.0, 20e-1 and 0.2e1 alike; 9007199254740993 and 9007199254740992 not).
// It is the one reader of JSON numbers: the idempotency fingerprint (Canonical) and
// the decoder (Int) both use it, so they cannot disagree about which spellings are
// equal. Reading is linear in the literal's length: no math/big, whose conversions
// take seconds over a megabyte of digits that any client may send.
type Number struct {
	// Neg is the sign; false for zero.
	Neg bool
	// Digits are the significant digits, without leading or trailing zeros; "" for
	// zero.
	Digits string
	// Exp is the decimal exponent as a canonical integer literal ("0", "-12", "345"),
	// of any length; "0" for zero.
	Exp string
}

// ParseNumber returns the exact value of lit, a JSON number (RFC 8259 section 6):
// [-]digits[.digits][(e|E)[+|-]digits]; ok is false otherwise. Leading zeros are let
// through (000012 is 12): the JSON tokenizer, which every body passes first, refuses
// them.
func ParseNumber(lit string) (n Number, ok bool) {
	s := strings.TrimPrefix(lit, "-")
	if !validNumber(s) {
		return Number{}, false
	}
	mant, expLit, _ := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return Number{Exp: "0"}, true // -0, 0.0 and 0e5 are all zero
	}
	trimmed := strings.TrimRight(digits, "0")
	// The value is trimmed × 10^(expLit − len(frac) + zeros trimmed).
	adj := int64(len(digits)-len(trimmed)) - int64(len(frac))
	return Number{Neg: lit[0] == '-', Digits: trimmed, Exp: addExp(expLit, adj)}, true
}

// validNumber reports whether s (without its sign) is int [frac] [exp].
func validNumber(s string) bool {
	i := digitsAt(s, 0)
	if i == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		j := digitsAt(s, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digitsAt(s, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

func digitsAt(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// addExp returns the canonical literal of e + adj, where e is a JSON exponent
// ("", "7", "+007", "-12") of any length and adj is small (bounded by a body's size).
func addExp(e string, adj int64) string {
	neg := strings.HasPrefix(e, "-")
	mag := strings.TrimLeft(strings.TrimLeft(e, "+-"), "0")
	if len(mag) <= 18 { // fits an int64 with room for adj
		v, _ := strconv.ParseInt("0"+mag, 10, 64)
		if neg {
			v = -v
		}
		return strconv.FormatInt(v+adj, 10)
	}
	// |e| ≥ 10^18 > |adj|: the sign is e's, and the magnitude moves by adj toward or
	// away from zero. Work on the last 18 digits and carry into the rest.
	if neg {
		adj = -adj
	}
	hi, lo := mag[:len(mag)-18], mag[len(mag)-18:]
	v, _ := strconv.ParseInt(lo, 10, 64)
	v += adj
	const base = 1_000_000_000_000_000_000
	switch {
	case v >= base:
		v -= base
		hi = stepDecimal(hi, 1)
	case v < 0:
		v += base
		hi = stepDecimal(hi, -1)
	}
	out := strings.TrimLeft(hi+pad18(v), "0")
	if neg {
		return "-" + out
	}
	return out
}

func pad18(v int64) string {
	s := strconv.FormatInt(v, 10)
	return strings.Repeat("0", 18-len(s)) + s
}

// stepDecimal adds 1 or −1 to the positive decimal literal d (d ≥ 1 for −1).
func stepDecimal(d string, step int) string {
	b := []byte(d)
	for i := len(b) - 1; i >= 0; i-- {
		if step > 0 && b[i] < '9' {
			b[i]++
			return string(b)
		}
		if step < 0 && b[i] > '0' {
			b[i]--
			return string(b)
		}
		if step > 0 {
			b[i] = '0'
		} else {
			b[i] = '9'
		}
	}
	return "1" + string(b) // only an increment carries out of the top digit
}

// Append appends n's canonical spelling: "0", or "[-]<Digits>e<Exp>".
func (n Number) Append(dst []byte) []byte {
	if n.Digits == "" {
		return append(dst, '0')
	}
	if n.Neg {
		dst = append(dst, '-')
	}
	dst = append(dst, n.Digits...)
	dst = append(dst, 'e')
	return append(dst, n.Exp...)
}

// Int returns n as an int when it is an integer that fits one.
func (n Number) Int() (int, bool) {
	if n.Digits == "" {
		return 0, true // any spelling of zero
	}
	if len(n.Exp) > 4 { // beyond ±999: far past int, or a fraction
		return 0, false
	}
	exp, _ := strconv.Atoi(n.Exp)
	if exp < 0 || len(n.Digits)+exp > 19 {
		return 0, false // a fraction, or more digits than an int64 holds
	}
	v, err := strconv.ParseInt(n.Digits+strings.Repeat("0", exp), 10, 64)
	if err != nil || int64(int(v)) != v {
		return 0, false
	}
	if n.Neg {
		v = -v
	}
	return int(v), true
}
