package risks_test

import (
	"reflect"
	"testing"

	"github.com/riskapi/riskapi/internal/risks"
)

// TestEveryFilterIsDecidedCostlyOrNot: under a sort by title, every filter of
// risks.Query makes a page costly (docs/register.md, "Costly reads") but statuses,
// treatments and factors, which a page reaches within a few hundred rows — including
// a field added later, until it is decided.
func TestEveryFilterIsDecidedCostlyOrNot(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeFor[risks.Query]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Name == "Sort" {
			continue
		}
		q := risks.Query{Sort: risks.Sort{Field: risks.SortTitle}}
		v := reflect.ValueOf(&q).Elem().Field(i)
		switch v.Kind() {
		case reflect.Pointer:
			v.Set(reflect.New(f.Type.Elem()))
		case reflect.Slice:
			v.Set(reflect.MakeSlice(f.Type, 1, 1))
		case reflect.Map:
			v.Set(reflect.MakeMap(f.Type))
			v.SetMapIndex(reflect.New(f.Type.Key()).Elem(), reflect.New(f.Type.Elem()).Elem())
		default:
			t.Fatalf("field %s of kind %s: teach this test to set it", f.Name, v.Kind())
		}
		cheap := map[string]bool{"Statuses": true, "Treatments": true, "Likelihoods": true, "Impacts": true,
			"ResidualLikelihoods": true, "ResidualImpacts": true}[f.Name]
		if got := q.Costly(); got == cheap {
			t.Errorf("with %s set, Costly = %v", f.Name, got)
		}
		if q.Counted() != cheap {
			t.Errorf("with %s set, Counted = %v", f.Name, q.Counted())
		}
	}
	if (risks.Query{Sort: risks.DefaultSort}).Costly() {
		t.Error("a plain page is costly")
	}
}
