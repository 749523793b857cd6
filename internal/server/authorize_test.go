package server

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/tenants"
)

// TestAuthorize: a route's declared scope and admin flag are what decide 403, and a
// route mounted without authentication is 401, never a pass.
func TestAuthorize(t *testing.T) {
	t.Parallel()
	readKey := &auth.Principal{Kind: auth.KindAPIKey, TenantID: "ten_1", Scopes: []tenants.Scope{tenants.ScopeRisksRead}}
	admin := &auth.Principal{Kind: auth.KindSession, TenantID: "ten_1", Role: tenants.RoleAdmin, Scopes: tenants.AllScopes}
	member := &auth.Principal{Kind: auth.KindSession, TenantID: "ten_1", Role: tenants.RoleMember, Scopes: tenants.AllScopes}
	for _, tt := range []struct {
		name  string
		p     *auth.Principal
		scope tenants.Scope
		admin bool
		want  problem.Code // "" passes
	}{
		{"scope held", readKey, tenants.ScopeRisksRead, false, ""},
		{"scope lacking", readKey, tenants.ScopeRisksWrite, false, problem.Forbidden},
		{"admin route, API key", readKey, "", true, problem.Forbidden},
		{"admin route, admin", admin, "", true, ""},
		{"admin route, member", member, "", true, problem.Forbidden},
		{"member route, member", member, tenants.ScopeRisksWrite, false, ""},
		{"no principal", nil, tenants.ScopeRisksRead, false, problem.Unauthenticated},
		{"no principal, admin route", nil, "", true, problem.Unauthenticated},
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		if tt.p != nil {
			req = req.WithContext(auth.WithPrincipal(req.Context(), tt.p))
		}
		c := echo.New().NewContext(req, httptest.NewRecorder())
		ran := false
		err := authorize(tt.scope, tt.admin)(func(echo.Context) error { ran = true; return nil })(c)
		var got problem.Code
		if p := problem.As(err); p != nil {
			got = p.Code
		} else if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got != tt.want || ran != (tt.want == "") {
			t.Errorf("%s: code %q, handler ran %v; want code %q", tt.name, got, ran, tt.want)
		}
	}
}
