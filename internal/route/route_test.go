package route_test

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/route"
	"github.com/riskapi/riskapi/internal/tenants"
)

func ok(echo.Context) error { return nil }

// TestCheckRefusesUnsafeDeclarations: declarations that would mount a route with a
// weaker policy than they seem to say are refused before the server starts.
func TestCheckRefusesUnsafeDeclarations(t *testing.T) {
	t.Parallel()
	for name, r := range map[string]route.Route{
		"no versions (would be public)":  {Method: "GET", Path: "/x", Handler: ok},
		"unauthenticated with a scope":   {Method: "GET", Path: "/x", Handler: ok, Versions: route.Unauthenticated, Scope: tenants.ScopeRisksRead},
		"unauthenticated and v1":         {Method: "GET", Path: "/x", Handler: ok, Versions: route.Unauthenticated | route.V1},
		"admin on /v2":                   {Method: "GET", Path: "/x", Handler: ok, Versions: route.Both, Admin: true},
		"sign-in with a credential":      {Method: "POST", Path: "/x", Handler: ok, Versions: route.V1, SignIn: true},
		"raw body without a limit":       {Method: "POST", Path: "/x", Handler: ok, Versions: route.V2, Body: route.Body{Kind: route.RawBody}},
		"upload without form rules":      {Method: "POST", Path: "/x", Handler: ok, Versions: route.V2, Body: route.Body{Kind: route.UploadBody}},
		"read requiring a key":           {Method: "GET", Path: "/x", Handler: ok, Versions: route.V2, Idempotency: idempotency.Required},
		"no handler":                     {Method: "GET", Path: "/x", Versions: route.V2},
		"relative path":                  {Method: "GET", Path: "x", Handler: ok, Versions: route.V2},
		"untraced authenticated route":   {Method: "GET", Path: "/x", Handler: ok, Versions: route.V2, Untraced: true},
		"untraced path with a parameter": {Method: "GET", Path: "/x/:id", Handler: ok, Versions: route.Unauthenticated, Untraced: true},
	} {
		if err := r.Check(); err == nil {
			t.Errorf("%s: Check passed", name)
		}
	}
	good := route.Route{Method: "GET", Path: "/x", Handler: ok, Versions: route.V1, Admin: true}
	if err := good.Check(); err != nil {
		t.Errorf("admin-only /v1 route: %v", err)
	}
	probe := route.Route{Method: "GET", Path: "/healthz", Handler: ok, Versions: route.Unauthenticated, Untraced: true}
	if err := probe.Check(); err != nil {
		t.Errorf("untraced probe: %v", err)
	}
}

func context(target string, p *auth.Principal) echo.Context {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	if p != nil {
		req = req.WithContext(auth.WithPrincipal(req.Context(), p))
	}
	return echo.New().NewContext(req, httptest.NewRecorder())
}

// TestTenantWithoutAuthenticationIs401: a handler mounted without authentication
// fails closed with 401 instead of panicking or reading an empty tenant.
func TestTenantWithoutAuthenticationIs401(t *testing.T) {
	t.Parallel()
	if _, err := route.Tenant(context("/", nil)); problem.As(err) == nil || problem.As(err).Code != problem.Unauthenticated {
		t.Errorf("no principal: err = %v, want UNAUTHENTICATED", err)
	}
	tenant, err := route.Tenant(context("/", &auth.Principal{Kind: auth.KindAPIKey, TenantID: "ten_1", Scope: "ten_1"}))
	if err != nil || tenant != "ten_1" {
		t.Errorf("Tenant = %q, %v; want ten_1", tenant, err)
	}
}

func TestPagingOf(t *testing.T) {
	t.Parallel()
	id := ids.New(ids.Risk)
	cursor := base64.RawURLEncoding.EncodeToString([]byte(id))
	for _, tt := range []struct {
		query   string
		want    route.Paging
		invalid string
	}{
		{"", route.Paging{Limit: route.DefaultLimit}, ""},
		{"limit=1&cursor=" + cursor, route.Paging{Limit: 1, After: id}, ""},
		{"limit=100", route.Paging{Limit: 100}, ""},
		{"limit=0", route.Paging{}, "limit"},
		{"limit=101", route.Paging{}, "limit"},
		{"limit=x", route.Paging{}, "limit"},
		{"cursor=%25%25", route.Paging{}, "cursor"},
		{"cursor=" + base64.RawURLEncoding.EncodeToString([]byte(ids.New(ids.Attachment))), route.Paging{}, "cursor"},
	} {
		got, err := route.PagingOf(context("/?"+tt.query, nil), ids.Risk)
		if tt.invalid != "" {
			p := problem.As(err)
			if p == nil || p.Code != problem.ValidationFailed || len(p.Errors) != 1 || p.Errors[0].Field != tt.invalid {
				t.Errorf("%q: err = %v, want VALIDATION_FAILED naming %s", tt.query, err, tt.invalid)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q: %+v, %v; want %+v", tt.query, got, err, tt.want)
		}
	}
}

// TestNewPageCursorRoundTrips: the next cursor of a page is what PagingOf reads back
// as the last item's ID; the last page has none and an empty page has [] data.
func TestNewPageCursorRoundTrips(t *testing.T) {
	t.Parallel()
	items := []string{ids.New(ids.Risk), ids.New(ids.Risk)}
	id := func(s string) string { return s }
	show := strings.ToUpper
	p := route.NewPage(items, true, id, show)
	if p.NextCursor == nil || !p.HasMore || !cmp.Equal(p.Data, []string{show(items[0]), show(items[1])}) {
		t.Fatalf("page = %+v", p)
	}
	got, err := route.PagingOf(context("/?cursor="+*p.NextCursor, nil), ids.Risk)
	if err != nil || got.After != items[1] {
		t.Errorf("cursor reads back as %+v, %v; want After %s", got, err, items[1])
	}
	if last := route.NewPage(items, false, id, show); last.NextCursor != nil || last.HasMore {
		t.Errorf("last page = %+v, want no cursor", last)
	}
	if empty := route.NewPage([]string{}, false, id, show); empty.Data == nil {
		t.Errorf("empty page has null data")
	}
}
