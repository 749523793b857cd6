package jsonbody_test

import (
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/problem"
)

func canonical(t *testing.T, in string) string {
	t.Helper()
	out, err := jsonbody.Canonical(nil, []byte(in))
	if err != nil {
		t.Fatalf("%s: %v", in, err)
	}
	return string(out)
}

func TestCanonicalJSONEquivalences(t *testing.T) {
	same := []struct{ name, a, b string }{
		{"member order", `{"a":1,"b":2}`, `{"b":2,"a":1}`},
		{"whitespace", `{"a":[1,2]}`, " {\n\t\"a\" : [ 1 , 2 ] }\r\n"},
		{"string escapes", `{"t":"A\u00e9/"}`, `{"t":"\u0041é\/"}`},
		{"integer spelled as decimal", `{"n":3}`, `{"n":3.0}`},
		{"exponent", `{"n":2}`, `{"n":2e0}`},
		{"scaled exponent", `{"n":2.5}`, `{"n":25E-1}`},
		{"positive exponent sign", `{"n":1e5}`, `{"n":100000}`},
		{"negative zero", `{"n":0}`, `{"n":-0.0}`},
		{"nested", `{"x":{"z":[{"b":1,"a":2}],"y":null}}`, `{"x":{"y":null,"z":[{"a":2,"b":1.00}]}}`},
	}
	for _, tc := range same {
		t.Run(tc.name, func(t *testing.T) {
			if ca, cb := canonical(t, tc.a), canonical(t, tc.b); ca != cb {
				t.Fatalf("canonical forms differ:\n%s\n%s", ca, cb)
			}
		})
	}
}

func TestCanonicalJSONDistinctions(t *testing.T) {
	differ := []struct{ name, a, b string }{
		// Beyond 2^53 a double would round both to the same value; exact decimals don't.
		{"large integers", `9007199254740993`, `9007199254740992`},
		{"tiny difference", `0.1`, `0.10000000000000001`},
		{"huge exponents", `1e400`, `1e401`},
		{"NFC vs NFD", `"\u00e9"`, `"e\u0301"`},
		{"null vs object", `null`, `{}`},
		{"array order", `[1,2]`, `[2,1]`},
		{"string vs number", `"1"`, `1`},
		{"sign", `-1`, `1`},
	}
	for _, tc := range differ {
		t.Run(tc.name, func(t *testing.T) {
			if ca, cb := canonical(t, tc.a), canonical(t, tc.b); ca == cb {
				t.Fatalf("%s and %s canonicalise alike: %s", tc.a, tc.b, ca)
			}
		})
	}
}

func TestCanonicalJSONForm(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"b":[true,false,null],"a":"x\ty"}`, `{"a":"x\ty","b":[true,false,null]}`},
		{`120`, `12e1`},
		{`-0.0500`, `-5e-2`},
		{`"\u001f"`, `"\u001f"`},
		// RFC 8785 3.2.3: names sort by UTF-16 code units, so U+1F600 (D83D DE00)
		// precedes U+E000 although its code point is larger.
		{"{\"\ue000\":1,\"\U0001F600\":2}", "{\"\U0001F600\":2e0,\"\ue000\":1e0}"},
	}
	for _, tc := range cases {
		got, err := jsonbody.Canonical(nil, []byte(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if string(got) != tc.want {
			t.Errorf("jsonbody.Canonical(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestCanonicalJSONRejects(t *testing.T) {
	bad := map[string]string{
		"duplicate names": `{"a":1,"a":1}`,
		"invalid UTF-8":   "{\"a\":\"\xff\"}",
		"lone surrogate":  `{"a":"\ud800"}`,
		"trailing data":   `{} {}`,
		"truncated":       `{"a":`,
		"bare word":       `nope`,
	}
	for name, in := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := jsonbody.Canonical(nil, []byte(in))
			if p := problem.As(err); p == nil || p.Code != problem.ValidationFailed {
				t.Fatalf("Canonical(%q) error = %v, want VALIDATION_FAILED", in, err)
			}
		})
	}
}

func FuzzCanonicalJSONIdempotent(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[2.50,"x"]}`, `1e-7`, `[{"\u00e9":null}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c1, err := jsonbody.Canonical(nil, data)
		if err != nil {
			return
		}
		c2, err := jsonbody.Canonical(nil, c1)
		if err != nil {
			t.Fatalf("canonical form %s does not parse: %v", c1, err)
		}
		if string(c1) != string(c2) {
			t.Fatalf("not a fixed point: %s -> %s", c1, c2)
		}
	})
}

// TestCanonicalDeepNesting: a body nested about 10,000 deep (jsontext's limit), members out of order at every
// level, canonicalises to the sorted form (the builder keeps no recursion, and a
// nested object's text is placed, not copied, into its parent's: issue 25, item 2).
func TestCanonicalDeepNesting(t *testing.T) {
	const depth = 9_990
	in := strings.Repeat(`{"z":`, depth) + "[]" + strings.Repeat(`,"a":[1.0,{"y":true,"x":null}]}`, depth)
	want := strings.Repeat(`{"a":[1e0,{"x":null,"y":true}],"z":`, depth) + "[]" + strings.Repeat("}", depth)
	if got := canonical(t, in); got != want {
		t.Fatalf("deep body: canonical form differs (len %d, want %d); starts %.80s", len(got), len(want), got)
	}
}

// TestCanonicalUTF16Order: names sort by UTF-16 code units (RFC 8785 section 3.2.3),
// where a character past U+FFFF (a surrogate pair) comes before U+E000..U+FFFF,
// unlike in UTF-8 byte order.
func TestCanonicalUTF16Order(t *testing.T) {
	got := canonical(t, `{"\uFB01":1,"\ud83d\ude00":2,"\u00e9":3,"e":4,"":5}`)
	if want := `{"":5e0,"e":4e0,"é":3e0,"😀":2e0,"ﬁ":1e0}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
