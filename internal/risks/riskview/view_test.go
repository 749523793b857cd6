package riskview_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskview"
	riskapi "github.com/riskapi/riskapi/sdk"
)

// internal are the domain's fields no client sees: the tenant comes from the
// credential, the external ID only matches inbound findings.
var internal = []string{"TenantID", "ExternalID"}

// member is the JSON name the API gives a domain field: "ID" → "id",
// "RiskScore" → "riskScore".
func member(field string) string {
	if strings.ToUpper(field) == field {
		return strings.ToLower(field)
	}
	return strings.ToLower(field[:1]) + field[1:]
}

// fieldsOf lists the names of t's fields, as JSON members when json is set (the tag's
// name, fields tagged "-" left out), else as the domain names them, minus skip.
func fieldsOf(t reflect.Type, json bool, skip ...string) []string {
	var out []string
	for f := range t.Fields() {
		name := f.Name
		if json {
			name, _, _ = strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
		} else if !f.IsExported() || slices.Contains(skip, name) {
			continue
		} else {
			name = member(name)
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

func domainFields[T any](skip ...string) []string {
	return fieldsOf(reflect.TypeFor[T](), false, skip...)
}

func jsonMembers[T any]() []string { return fieldsOf(reflect.TypeFor[T](), true) }

func specProperties(t *testing.T, schema string) []string {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile("../../../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := doc.Components.Schemas[schema]
	if s == nil {
		t.Fatalf("docs/openapi.yaml has no schema %s", schema)
	}
	var out []string
	for name := range s.Value.Properties {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// TestEveryFieldIsShownEverywhere fails when a field is added to the domain's risk
// but not to its public shape, the OpenAPI document or the Go SDK (or the reverse):
// the lists are compared, not trusted.
func TestEveryFieldIsShownEverywhere(t *testing.T) {
	t.Parallel()
	// livemode is no field of the domain's risk: the view derives it from the
	// risk's tenant, a tenant or its sandbox (docs/sandboxes.md). OwnerUserID is
	// shown inside owner ({"userId", "name"}), not as a member.
	shown := append(domainFields[risks.Risk](append(internal, "OwnerUserID")...), "livemode")
	slices.Sort(shown)
	writable := domainFields[risks.Fields]("OwnerUserID")
	for name, got := range map[string][]string{
		"riskview.Risk":          jsonMembers[riskview.Risk](),
		"docs/openapi.yaml Risk": specProperties(t, "Risk"),
		"riskapi.Risk":           jsonMembers[riskapi.Risk](),
	} {
		if diff := cmp.Diff(shown, got); diff != "" {
			t.Errorf("%s differs from the domain's risk (-domain +%s):\n%s", name, name, diff)
		}
	}
	for name, got := range map[string][]string{
		"risks.Update":                 domainFields[risks.Update]("OwnerUserID"),
		"riskview.Write":               jsonMembers[riskview.Write](),
		"riskview.Patch":               jsonMembers[riskview.Patch](),
		"docs/openapi.yaml RiskFields": specProperties(t, "RiskFields"),
		"sdk.RiskCreateParams":         jsonMembers[riskapi.RiskCreateParams](),
		"sdk.RiskUpdateParams": domainFields[riskapi.RiskUpdateParams]("Params", "ClearLikelihood", "ClearImpact", "ClearRiskScore",
			"ClearTreatment", "ClearReviewDate", "ClearReviewEvery", "ClearResidualLikelihood", "ClearResidualImpact"),
	} {
		if diff := cmp.Diff(writable, got); diff != "" {
			t.Errorf("%s differs from the domain's writable fields (-risks.Fields +%s):\n%s", name, name, diff)
		}
	}
}

// filled sets every field of *v to a non-zero value of its type, so that a
// conversion which forgets a field leaves a zero behind.
func filled[T any]() T {
	var v T
	fill(reflect.ValueOf(&v).Elem())
	return v
}

func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && v.Type().Field(i).Name != "Null" {
				fill(v.Field(i))
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int64:
		v.SetInt(3)
	case reflect.Bool:
		v.SetBool(true)
	}
}

// zeroFields names the fields of v (a struct) that are zero.
func zeroFields(v any) []string {
	rv := reflect.ValueOf(v)
	var out []string
	for i := range rv.NumField() {
		if rv.Field(i).IsZero() {
			out = append(out, rv.Type().Field(i).Name)
		}
	}
	return out
}

// TestConversionsCarryEveryField: each conversion between the shapes carries every
// field (webhooks.fieldsOf once dropped a new one silently).
func TestConversionsCarryEveryField(t *testing.T) {
	t.Parallel()
	r := filled[risks.Risk]()
	// An owner is one of userId and name: a user owner carries both of the domain's
	// owner fields.
	user := "usr_1"
	patch := filled[riskview.Patch]()
	patch.Owner.Value = riskview.OwnerWrite{UserID: &user}
	update, null, err := patch.Update()
	if null != "" || err != nil {
		t.Fatalf("a patch with every member set refused %q: %v", null, err)
	}
	write := filled[riskview.Write]()
	write.Owner = &riskview.OwnerWrite{UserID: &user}
	fields, err := write.Fields()
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{
		"riskview.Of":           riskview.Of(&r),
		"riskview.Write.Fields": fields,
		"riskview.Patch.Update": update,
		"risks.Update.Fields":   filled[risks.Update]().Fields(),
	} {
		if z := zeroFields(v); len(z) > 0 {
			t.Errorf("%s leaves %v unset", name, z)
		}
	}
}
