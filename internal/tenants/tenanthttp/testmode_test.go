package tenanthttp_test

import (
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
)

// TestTenantRoutesInTestMode: the tenant's settings are shared by both modes
// (docs/sandboxes.md): with Riskapi-Mode: test, GET /v1/tenant shows the tenant and
// POST /v1/tenant/api-version moves its pin, as in live mode.
func TestTenantRoutesInTestMode(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	tok := apitest.Login(t, env, a).Token
	test := http.Header{"Riskapi-Mode": {"test"}}
	got := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/tenant", Bearer: tok, Header: test}).Expect(http.StatusOK).Map()
	if got["id"] != a.ID || got["apiVersion"] != "2026-12-01" {
		t.Errorf("GET /v1/tenant in test mode = %v, want tenant %s on 2026-12-01", got, a.ID)
	}
	moved := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/tenant/api-version", Bearer: tok, Header: test,
		JSON: map[string]any{"version": "2027-01-15"}}).Expect(http.StatusOK).Map()
	if moved["id"] != a.ID || moved["apiVersion"] != "2027-01-15" {
		t.Errorf("move in test mode = %v", moved)
	}
	live := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/tenant", Bearer: tok}).Expect(http.StatusOK).Map()
	if live["apiVersion"] != "2027-01-15" {
		t.Errorf("live pin after a move in test mode = %v, want 2027-01-15", live["apiVersion"])
	}
	env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/tenant", Bearer: tok, Header: test,
		JSON: map[string]any{}}).Expect(http.StatusOK)
}
