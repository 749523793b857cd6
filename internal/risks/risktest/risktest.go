// Package risktest makes risks with every field set, for tests that must fail when a
// conversion, a column list or a CSV column drops a field: the store's round trips
// (riskstore), the export and import (riskview). Values are found by reflection over
// risks.Fields, so a field added to the domain is filled without being named here —
// unless its rules refuse the generic value, and then Full's error names the field
// and says to add a value to valid.
package risktest

import (
	"fmt"
	"reflect"
	"time"

	"github.com/riskapi/riskapi/internal/risks"
)

// valid gives, by field of risks.Fields, a value its rules accept for variant n
// where the generic one ("<Field> <n>", an integer from 1 to 5) would be refused, or
// nil to leave the field unset (the domain derives it).
var valid = map[string]func(n int) any{
	"Status":      func(n int) any { return []risks.Status{risks.StatusMitigated, risks.StatusClosed}[n%2] },
	"Treatment":   func(n int) any { return risks.Treatments[n%len(risks.Treatments)] },
	"ReviewDate":  func(n int) any { return fmt.Sprintf("2025-01-%02d", 1+n%28) },
	"RiskScore":   func(int) any { return nil }, // derived: Likelihood × Impact
	"ReviewEvery": func(n int) any { return risks.Cadences[n%len(risks.Cadences)] },
}

// Fields returns client-writable fields with every member given, valid, and for
// variant n different from those of variant n+1: text "<Field> <n>", each number of
// 1–5 one more (wrapping) than the number before it, metadata {"k<n>": "v<n>"}.
// It panics on a field type it cannot fill; add it here.
func Fields(n int) risks.Fields {
	var f risks.Fields
	v := reflect.ValueOf(&f).Elem()
	ints := 0
	for i := range v.NumField() {
		sf, dst := v.Type().Field(i), v.Field(i)
		if give, ok := valid[sf.Name]; ok {
			if x := give(n); x != nil {
				p := reflect.New(dst.Type().Elem())
				p.Elem().Set(reflect.ValueOf(x))
				dst.Set(p)
			}
			continue
		}
		switch {
		case dst.Kind() == reflect.Pointer && dst.Type().Elem().Kind() == reflect.String:
			p := reflect.New(dst.Type().Elem())
			p.Elem().SetString(fmt.Sprintf("%s %d", sf.Name, n))
			dst.Set(p)
		case dst.Kind() == reflect.Pointer && dst.Type().Elem().Kind() == reflect.Int:
			ints++
			p := reflect.New(dst.Type().Elem())
			p.Elem().SetInt(int64(1 + (ints+n)%5))
			dst.Set(p)
		case dst.Type() == reflect.TypeFor[map[string]string]():
			dst.Set(reflect.ValueOf(map[string]string{fmt.Sprintf("k%d", n): fmt.Sprintf("v%d", n)}))
		default:
			panic(fmt.Sprintf("risktest: no value for risks.Fields.%s (%s): add one to valid", sf.Name, sf.Type))
		}
	}
	return f
}

// Update returns a PATCH giving every field Fields(n) gives, none null.
func Update(n int) risks.Update {
	f := reflect.ValueOf(Fields(n))
	var u risks.Update
	v := reflect.ValueOf(&u).Elem()
	for i := range v.NumField() {
		sf, dst := v.Type().Field(i), v.Field(i)
		src := f.FieldByName(sf.Name)
		switch {
		case !src.IsValid():
			panic("risktest: risks.Update." + sf.Name + " is no field of risks.Fields")
		case src.Type() == dst.Type():
			dst.Set(src)
		case src.IsNil():
			// Not given: the domain derives it.
		default:
			// *Nullable[T] from *T.
			p := reflect.New(dst.Type().Elem())
			p.Elem().FieldByName("Value").Set(src.Elem())
			dst.Set(p)
		}
	}
	return u
}

// Full returns a valid risk of tenantID with every field of risks.Risk set: Fields(n),
// the external ID "ext-<n>", created and updated at now. Errors: the domain's
// refusal of Fields(n) (add a valid value for the field it names), or the name of a
// field still unset.
func Full(id, tenantID string, n int, now time.Time) (*risks.Risk, error) {
	r, err := risks.New(id, tenantID, Fields(n), now)
	if err != nil {
		return nil, fmt.Errorf("risktest: the domain refuses Fields(%d): %w; add a valid value to risktest's valid", n, err)
	}
	ext := fmt.Sprintf("ext-%d", n)
	r.ExternalID = &ext
	if unset := Unset(*r); len(unset) > 0 {
		return nil, fmt.Errorf("risktest: Full(%d) leaves %v unset; give it a value in risktest", n, unset)
	}
	return r, nil
}

// Unset names the fields of v (a struct) that hold their zero value.
func Unset(v any) []string {
	rv := reflect.ValueOf(v)
	var out []string
	for i := range rv.NumField() {
		if rv.Field(i).IsZero() {
			out = append(out, rv.Type().Field(i).Name)
		}
	}
	return out
}

// Same names the fields of a and b (the same struct type) that hold equal values.
func Same(a, b any) []string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var out []string
	for i := range va.NumField() {
		if reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, va.Type().Field(i).Name)
		}
	}
	return out
}
