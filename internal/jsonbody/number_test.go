package jsonbody_test

import (
	"math/big"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/jsonbody"
)

// TestNumberIsExact: equal values read alike and different values differently, also
// with exponents too long for any machine integer (the fingerprint must still tell
// them apart, exactly).
func TestNumberIsExact(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("9", 30) // 10^30 − 1
	cases := []struct{ lit, want string }{
		{"0", "0"}, {"-0.0", "0"}, {"0e" + big, "0"},
		{"120", "12e1"}, {"-0.0500", "-5e-2"}, {"2.50E+3", "25e2"}, {"1.", ""},
		{"1e" + big, "1e" + big},
		{"10e" + big, "1e1" + strings.Repeat("0", 30)},                     // carries into a new digit
		{"0.1e-" + big, "1e-1" + strings.Repeat("0", 30)},                  // 10^30 − 1 + 1
		{"0.1e" + big, "1e" + big[:29] + "8"},                              // 10^30 − 2
		{"1e1" + strings.Repeat("0", 30), "1e1" + strings.Repeat("0", 30)}, // unchanged
		{"0.1e1" + strings.Repeat("0", 30), "1e" + big},                    // borrows across the 18-digit split
	}
	for _, tc := range cases {
		n, ok := jsonbody.ParseNumber(tc.lit)
		if tc.want == "" {
			if ok {
				t.Errorf("%s accepted", tc.lit)
			}
			continue
		}
		if got := string(n.Append(nil)); !ok || got != tc.want {
			t.Errorf("%s = %s (%v), want %s", tc.lit, got, ok, tc.want)
		}
	}
	for _, bad := range []string{"", "-", "1.", ".1", "1e", "1e+", "+1", "1.5.2", "0x1", " 1", "1 "} {
		if _, ok := jsonbody.ParseNumber(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestCanonicalAndIntAgree: every spelling Int decodes to one value canonicalises to
// one form, and spellings of different values never share one — the fingerprint and
// the handler read numbers alike.
func TestCanonicalAndIntAgree(t *testing.T) {
	t.Parallel()
	spellings := []string{"3", "3.0", "3e0", "0.3e1", "30e-1", "300E-2", "3.000", "-3", "-3.0", "4", "0", "-0", "0.0e9"}
	byValue := map[int]string{}
	byForm := map[string]int{}
	for _, s := range spellings {
		var n jsonbody.Int
		if err := n.UnmarshalJSON([]byte(s)); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		form, err := jsonbody.Canonical(nil, []byte(s))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if f, ok := byValue[int(n)]; ok && f != string(form) {
			t.Errorf("%s decodes to %d like another spelling but canonicalises to %s, not %s", s, n, form, f)
		}
		if v, ok := byForm[string(form)]; ok && v != int(n) {
			t.Errorf("%s canonicalises to %s like %d but decodes to %d", s, form, v, n)
		}
		byValue[int(n)], byForm[string(form)] = string(form), int(n)
	}
}

// bigAppend is the math/big canonical number writer riskapi shipped before Number:
// fingerprints stored by it must still match, so Number.Append must agree with it on
// every literal.
func bigAppend(dst []byte, lit string) []byte {
	neg := strings.HasPrefix(lit, "-")
	lit = strings.TrimPrefix(lit, "-")
	mant, expStr, _ := strings.Cut(strings.ToLower(lit), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return append(dst, '0')
	}
	trimmed := strings.TrimRight(digits, "0")
	exp := new(big.Int)
	if expStr != "" {
		exp.SetString(strings.TrimPrefix(expStr, "+"), 10)
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

// FuzzNumberMatchesBig: Number's canonical spelling is the one stored fingerprints
// were computed with.
func FuzzNumberMatchesBig(f *testing.F) {
	for _, s := range []string{"0", "-0.0", "120", "-0.0500", "2.50E+3", "1e-7", "0.1e1000000000000000000",
		"10e999999999999999999", "0.0001e-999999999999999999", "123456789012345678901234567890.5e-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lit string) {
		n, ok := jsonbody.ParseNumber(lit)
		if !ok {
			return
		}
		if got, want := string(n.Append(nil)), string(bigAppend(nil, lit)); got != want {
			t.Fatalf("%s: Number gives %s, the shipped form is %s", lit, got, want)
		}
	})
}
