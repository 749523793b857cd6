package riskhttp_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/apitest"
)

// TestTenantIsolation: another tenant's risk is 404 on every route, whichever
// credential and API version, and nothing it tries changes the risk.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.Tenant("Acme"), env.Tenant("Beta")
	secret := create(env, a.Key, map[string]any{"title": "Acme's secret", "likelihood": 2, "impact": 3})
	own := create(env, b.Key, map[string]any{"title": "Beta's own"})
	bSession := apitest.Login(env.T, env, b).Token

	body := map[string]any{"title": "taken over", "status": "closed"}
	tests := []struct {
		name   string
		method string
		path   string
		bearer string
		header http.Header
	}{
		{"v2 GET", http.MethodGet, "/v2/risks/" + secret.ID, b.Key, nil},
		{"v2 PATCH", http.MethodPatch, "/v2/risks/" + secret.ID, b.Key, nil},
		{"v2 PUT", http.MethodPut, "/v2/risks/" + secret.ID, b.Key, nil},
		{"v2 DELETE", http.MethodDelete, "/v2/risks/" + secret.ID, b.Key, nil},
		{"v2 PATCH keyed", http.MethodPatch, "/v2/risks/" + secret.ID, b.Key, http.Header{"Idempotency-Key": {"isolation-1"}}},
		{"v2 DELETE keyed", http.MethodDelete, "/v2/risks/" + secret.ID, b.Key, http.Header{"Idempotency-Key": {"isolation-2"}}},
		{"v2 GET read-only key", http.MethodGet, "/v2/risks/" + secret.ID, b.ReadKey, nil},
		{"v1 GET", http.MethodGet, "/v1/risks/" + secret.ID, bSession, nil},
		{"v1 PATCH", http.MethodPatch, "/v1/risks/" + secret.ID, bSession, nil},
		{"v1 PUT", http.MethodPut, "/v1/risks/" + secret.ID, bSession, nil},
		{"v1 DELETE", http.MethodDelete, "/v1/risks/" + secret.ID, bSession, nil},
		{"v1 GET by cookie", http.MethodGet, "/v1/risks/" + secret.ID, "", http.Header{"Cookie": {"session=" + bSession}}},
		{"v1 PATCH by cookie", http.MethodPatch, "/v1/risks/" + secret.ID, "", http.Header{"Cookie": {"session=" + bSession}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := apitest.Request{Method: tt.method, Path: tt.path, Bearer: tt.bearer, Header: tt.header}
			if tt.method == http.MethodPatch || tt.method == http.MethodPut {
				req.JSON = body
			}
			apitest.Do(t, env, req).ExpectProblem(http.StatusNotFound, "NOT_FOUND")
		})
	}

	// B's lists show B's risk only, on both versions and every page.
	for _, l := range []apitest.Request{
		{Method: http.MethodGet, Path: "/v2/risks", Bearer: b.Key},
		{Method: http.MethodGet, Path: "/v2/risks?limit=1", Bearer: b.Key},
		{Method: http.MethodGet, Path: "/v1/risks", Bearer: bSession},
	} {
		var p page
		env.Do(l).Expect(http.StatusOK).Decode(&p)
		if diff := cmp.Diff([]risk{own}, p.Data); diff != "" || p.HasMore {
			t.Errorf("%s: hasMore %v, data (-want +got):\n%s", l.Path, p.HasMore, diff)
		}
	}
	// A cursor past every risk (the digest is that of the query without parameters)
	// does not open A's risks to B.
	var p page
	maxCursor := base64.RawURLEncoding.EncodeToString([]byte(`{"k":"9999-12-31T00:00:00Z","i":"risk_` +
		strings.Repeat("f", 32) + `","q":"e3b0c44298fc1c14"}`))
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks?cursor=" + maxCursor, Bearer: b.Key}).
		Expect(http.StatusOK).Decode(&p)
	if diff := cmp.Diff([]risk{own}, p.Data); diff != "" {
		t.Errorf("B's list from a forged cursor (-want +got):\n%s", diff)
	}

	// A's risk is exactly as it was.
	after := decodeRisk(env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + secret.ID, Bearer: a.Key}).
		Expect(http.StatusOK))
	if diff := cmp.Diff(secret, after); diff != "" {
		t.Errorf("A's risk changed (-before +after):\n%s", diff)
	}
	// And B's keyed attempts left nothing that A's own keyed write would trip over.
	env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + secret.ID, Bearer: a.Key,
		Header: http.Header{"Idempotency-Key": {"isolation-1"}}, JSON: map[string]any{"owner": "alice"}}).
		Expect(http.StatusOK)
}
