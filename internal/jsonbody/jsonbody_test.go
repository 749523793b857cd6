package jsonbody_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/problem"
)

type target struct {
	Name  *string                         `json:"name"`
	Count *jsonbody.Int                   `json:"count"`
	Note  jsonbody.Optional[string]       `json:"note"`
	Level jsonbody.Optional[jsonbody.Int] `json:"level"`
	Inner *struct {
		Deep string `json:"deep"`
	} `json:"inner"`
}

func str(s string) *string             { return &s }
func num(n jsonbody.Int) *jsonbody.Int { return &n }

func TestDecodeAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want target
	}{
		{"empty object", `{}`, target{}},
		{"whitespace around", " \n{\"name\":\"x\"}\t", target{Name: str("x")}},
		{"integer", `{"count":3}`, target{Count: num(3)}},
		{"integral decimal", `{"count":3.0}`, target{Count: num(3)}},
		{"exponent", `{"count":3e0}`, target{Count: num(3)}},
		{"integral exponent", `{"count":0.3e1}`, target{Count: num(3)}},
		{"negative", `{"count":-2}`, target{Count: num(-2)}},
		{"null pointer", `{"count":null}`, target{}},
		{"optional absent", `{"name":"a"}`, target{Name: str("a")}},
		{"optional null", `{"note":null}`, target{Note: jsonbody.Optional[string]{Set: true, Null: true}}},
		{"optional value", `{"note":""}`, target{Note: jsonbody.Optional[string]{Set: true}}},
		{"optional int", `{"level":4.00}`, target{Level: jsonbody.Optional[jsonbody.Int]{Set: true, Value: 4}}},
		{"escapes", `{"name":"\u00e9\ud83d\ude00"}`, target{Name: str("é😀")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got target
			if err := jsonbody.Unmarshal([]byte(tt.body), &got); err != nil {
				t.Fatalf("Unmarshal(%s): %v", tt.body, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestWrongTypeSaysWhatIsExpected: a member of the wrong type names the JSON it
// takes, so a client sending an owner as a string learns an object is wanted.
func TestWrongTypeSaysWhatIsExpected(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		`{"name":1}`:    "name: has the wrong type (number given, a string expected)",
		`{"inner":"x"}`: "inner: has the wrong type (string given, an object expected)",
		`{"note":[1]}`:  "note: has the wrong type (array given, a string expected)",
	} {
		var got target
		if p := problem.As(jsonbody.Unmarshal([]byte(body), &got)); p == nil || p.Detail != want {
			t.Errorf("Unmarshal(%s): %v, want detail %q", body, p, want)
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		body  string
		field string
	}{
		{"empty", ``, "body"},
		{"blank", "  \n", "body"},
		{"null document", `null`, "body"},
		{"array", `[]`, "body"},
		{"string", `"x"`, "body"},
		{"truncated", `{"name":`, "body"},
		{"trailing comma", `{"name":"a",}`, "body"},
		{"two documents", `{} {}`, "body"},
		{"unknown member", `{"nme":"a"}`, "nme"},
		{"unknown nested member", `{"inner":{"deep":"a","x":1}}`, "inner/x"},
		{"duplicate member", `{"name":"a","name":"b"}`, "name"},
		{"duplicate, escaped", `{"name":"a","na\u006de":"b"}`, "name"},
		{"wrong type", `{"name":1}`, "name"},
		{"string for int", `{"count":"3"}`, "count"},
		{"bool for int", `{"count":true}`, "count"},
		{"fraction", `{"count":3.5}`, "count"},
		{"tiny fraction", `{"count":3.0000000000000000001}`, "count"},
		{"beyond int64", `{"count":9223372036854775808}`, "count"},
		{"huge exponent", `{"count":1e400}`, "count"},
		{"optional fraction", `{"level":1.5}`, "level"},
		{"optional wrong type", `{"note":7}`, "note"},
		{"invalid UTF-8", "{\"name\":\"\xff\"}", "name"},
		{"lone surrogate", `{"name":"\ud800"}`, "name"},
		{"bad escape", `{"name":"\x41"}`, "name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got target
			err := jsonbody.Unmarshal([]byte(tt.body), &got)
			p := problem.As(err)
			if p == nil || p.Code != problem.ValidationFailed {
				t.Fatalf("Unmarshal(%q) = %v, want VALIDATION_FAILED", tt.body, err)
			}
			if len(p.Errors) != 1 || p.Errors[0].Field != tt.field {
				t.Errorf("errors = %+v, want one naming %q", p.Errors, tt.field)
			}
			if !strings.HasPrefix(p.Detail, tt.field+": ") {
				t.Errorf("detail = %q, want it to start with %q", p.Detail, tt.field+": ")
			}
		})
	}
}

// TestDecodeNamesEveryMember: one wrong member does not hide the others' faults
// (docs/errors.md, one error per offending field), named in the body's order.
func TestDecodeNamesEveryMember(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		fields     []string
	}{
		{"unknown members and a wrong type", `{"foo":1,"bar":2,"name":7}`, []string{"foo", "bar", "name"}},
		{"three wrong types", `{"name":5,"count":"3","level":2.5}`, []string{"name", "count", "level"}},
		{"good members skipped", `{"name":"ok","count":1.5,"note":"fine","inner":{"x":1}}`, []string{"count", "inner/x"}},
		{"a syntax error later: the decoder's first error alone", `{"name":5,"count":`, []string{"name"}},
		{"a duplicate name: the decoder's first error alone", `{"name":5,"count":"3","count":"4"}`, []string{"name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got target
			p := problem.As(jsonbody.Unmarshal([]byte(tt.body), &got))
			if p == nil || p.Code != problem.ValidationFailed {
				t.Fatalf("Unmarshal(%s) = %v, want VALIDATION_FAILED", tt.body, p)
			}
			var fields []string
			for _, e := range p.Errors {
				fields = append(fields, e.Field)
			}
			if diff := cmp.Diff(tt.fields, fields); diff != "" {
				t.Errorf("fields named (-want +got):\n%s\n%+v", diff, p.Errors)
			}
		})
	}
}

func TestIntSpellings(t *testing.T) {
	t.Parallel()
	ok := map[string]jsonbody.Int{
		"0": 0, "-0": 0, "0.000": 0, "0e999999999": 0, "7": 7, "-3": -3, "3.0": 3, "1e2": 100, "1E+2": 100,
		"120e-1": 12, "1.5e1": 15, "0.03e2": 3, "9223372036854775807": 9223372036854775807,
		"-9223372036854775807": -9223372036854775807, "000012": 12,
	}
	for in, want := range ok {
		var got jsonbody.Int
		if err := got.UnmarshalJSON([]byte(in)); err != nil || got != want {
			t.Errorf("%s = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"1e-1", "12e-1", "0.5", "1e19", "9223372036854775808", "1e1000000000",
		"1e-1000000000", `"3"`, "true", "[3]", "{}", ""} {
		var got jsonbody.Int
		if err := got.UnmarshalJSON([]byte(in)); err == nil {
			t.Errorf("%s accepted as %d", in, got)
		}
	}
}

// TestHugeNumbersAreCheap: a megabyte of digits is refused by the decoder, and
// canonicalised for the fingerprint, in linear time (math/big took seconds, a denial
// of service any key holder could send).
func TestHugeNumbersAreCheap(t *testing.T) {
	t.Parallel()
	start := time.Now()
	for _, n := range []string{"1" + strings.Repeat("0", 1<<20), "1." + strings.Repeat("0", 1<<20) + "1", "1e999999",
		"1e" + strings.Repeat("7", 1<<20), "1e-" + strings.Repeat("7", 1<<20)} {
		var got target
		err := jsonbody.Unmarshal([]byte(`{"count":`+n+`}`), &got)
		if p := problem.As(err); p == nil || p.Errors[0].Field != "count" {
			t.Errorf("a %d-byte number: %v", len(n), err)
		}
		if _, err := jsonbody.Canonical(nil, []byte(n)); err != nil {
			t.Errorf("canonicalising a %d-byte number: %v", len(n), err)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("five huge numbers took %s", d)
	}
}
