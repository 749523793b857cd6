package riskhttp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
)

// TestRegisterFields: the register's fields are stored and shown; metadata merges
// key by key; the scores stay true; bad values are 400 naming the field.
func TestRegisterFields(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	do := func(method, path string, body any) *apitest.Response {
		return env.Do(apitest.Request{Method: method, Path: path, Bearer: a.Key, JSON: body})
	}
	created := do(http.MethodPost, "/v2/risks", map[string]any{"title": "t", "likelihood": 2, "impact": 3,
		"treatment": "mitigate", "reviewDate": "2026-02-28", "residualLikelihood": 1, "residualImpact": 2,
		"metadata": map[string]string{"ticket": "SEC-1", "team": "ops", "gone": ""}}).Expect(http.StatusCreated).Map()
	want := map[string]any{"treatment": "mitigate", "reviewDate": "2026-02-28", "residualLikelihood": 1.0,
		"residualImpact": 2.0, "residualScore": 2.0, "riskScore": 6.0}
	for k, v := range want {
		if created[k] != v {
			t.Errorf("created %s = %v, want %v", k, created[k], v)
		}
	}
	if md := created["metadata"].(map[string]any); len(md) != 2 || md["ticket"] != "SEC-1" || md["team"] != "ops" {
		t.Errorf("created metadata = %v, want ticket and team (a key given \"\" is no key)", md)
	}
	path := "/v2/risks/" + created["id"].(string)

	patched := do(http.MethodPatch, path, map[string]any{"impact": 5, "residualImpact": nil,
		"metadata": map[string]string{"team": "", "owner.email": "a@example.com"}}).Expect(http.StatusOK).Map()
	if patched["riskScore"] != 10.0 || patched["residualScore"] != nil || patched["residualImpact"] != nil {
		t.Errorf("after PATCH riskScore %v residualScore %v residualImpact %v, want 10, null, null",
			patched["riskScore"], patched["residualScore"], patched["residualImpact"])
	}
	if md := patched["metadata"].(map[string]any); len(md) != 2 || md["ticket"] != "SEC-1" || md["owner.email"] != "a@example.com" {
		t.Errorf("merged metadata = %v, want ticket kept, team removed, owner.email added", md)
	}
	cleared := do(http.MethodPatch, path, map[string]any{"likelihood": nil, "treatment": nil, "reviewDate": nil}).
		Expect(http.StatusOK).Map()
	if cleared["riskScore"] != nil || cleared["treatment"] != nil || cleared["reviewDate"] != nil {
		t.Errorf("after clearing: riskScore %v treatment %v reviewDate %v, want all null",
			cleared["riskScore"], cleared["treatment"], cleared["reviewDate"])
	}
	// A migrated or new risk without metadata shows {}, never null.
	if md := do(http.MethodPost, "/v2/risks", map[string]any{"title": "bare"}).Expect(http.StatusCreated).Map()["metadata"]; md == nil {
		t.Error("metadata of a risk without any is null, want {}")
	}

	tooMany := map[string]string{}
	for i := range 51 {
		tooMany["k"+strings.Repeat("x", i%30)+string(rune('a'+i%26))+string(rune('a'+i/26))] = "v"
	}
	for _, tt := range []struct {
		field string
		body  map[string]any
	}{
		{"treatment", map[string]any{"treatment": "ignore"}},
		{"reviewDate", map[string]any{"reviewDate": "2026-02-30"}},
		{"reviewDate", map[string]any{"reviewDate": "2026-2-3"}},
		{"reviewDate", map[string]any{"reviewDate": "0001-01-01"}},
		{"title", map[string]any{"title": "invoice \u202Egnp.exe"}},
		{"category", map[string]any{"category": "ops\u001b[31m"}},
		{"residualLikelihood", map[string]any{"residualLikelihood": 6}},
		{"residualImpact", map[string]any{"residualImpact": 0}},
		{"metadata", map[string]any{"metadata": map[string]string{"bad key": "v"}}},
		{"metadata", map[string]any{"metadata": map[string]string{strings.Repeat("k", 41): "v"}}},
		{"metadata", map[string]any{"metadata": map[string]string{"k": strings.Repeat("é", 501)}}},
		{"metadata", map[string]any{"metadata": tooMany}},
		{"metadata", map[string]any{"metadata": nil}},
	} {
		expectInvalid(t, do(http.MethodPatch, path, tt.body), tt.field)
	}
}
