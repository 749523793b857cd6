package server_test

import (
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/tenants"
)

// TestSelfServiceMatchesSpec validates the self-service routes' responses, each main
// status, against docs/openapi.yaml.
func TestSelfServiceMatchesSpec(t *testing.T) {
	t.Parallel()
	s := newSpecChecker(t)
	env := apitest.New(t)
	a := env.Tenant("Acme")
	admin := env.User(a.ID, tenants.RoleAdmin)
	member := env.User(a.ID, tenants.RoleMember)
	ad, mb := admin.Token, member.Token
	req := func(method, path, tok string, body any, h http.Header) apitest.Request {
		return apitest.Request{Method: method, Path: path, Bearer: tok, JSON: body, Header: h}
	}
	var u, k, src struct{ ID string }
	s.run(t, env, exchange{"create user", req("POST", "/v1/users", ad, map[string]string{"email": "carol@example.com", "password": "password123", "role": "member"}, key("spec-user-1")), 201}).Decode(&u)
	s.run(t, env, exchange{"create key", req("POST", "/v1/api-keys", ad, map[string]any{"name": "ci", "scopes": []string{"risks:read"}}, nil), 201}).Decode(&k)
	s.run(t, env, exchange{"create source", req("POST", "/v1/webhook-sources", ad, map[string]string{"source": "scanner"}, nil), 201}).Decode(&src)
	missingUser, missingKey, missingSrc := "usr_0193b2c4d5e67f8091a2b3c4d5e6f708", "key_0193b2c4d5e67f8091a2b3c4d5e6f708", "whk_0193b2c4d5e67f8091a2b3c4d5e6f708"
	for _, x := range []exchange{
		{"me", req("GET", "/v1/me", mb, nil, nil), 200},
		{"me unauthenticated", req("GET", "/v1/me", "", nil, nil), 401},
		{"password invalid", req("POST", "/v1/me/password", mb, map[string]string{"currentPassword": member.Password, "newPassword": "short"}, nil), 400},
		{"password unauthenticated", req("POST", "/v1/me/password", "", map[string]string{"currentPassword": "x", "newPassword": "password123"}, nil), 401},
		{"replay user", req("POST", "/v1/users", ad, map[string]string{"email": "carol@example.com", "password": "password123", "role": "member"}, key("spec-user-1")), 201},
		{"user key reused", req("POST", "/v1/users", ad, map[string]string{"email": "dan@example.com", "password": "password123", "role": "member"}, key("spec-user-1")), 422},
		{"create user invalid", req("POST", "/v1/users", ad, map[string]string{"email": "nope", "password": "password123", "role": "member"}, nil), 400},
		{"create user as member", req("POST", "/v1/users", mb, map[string]string{"email": "eve@example.com", "password": "password123", "role": "member"}, nil), 403},
		{"list users", req("GET", "/v1/users?limit=1", ad, nil, nil), 200},
		{"list users bad cursor", req("GET", "/v1/users?cursor=zz", ad, nil, nil), 400},
		{"list users as member", req("GET", "/v1/users", mb, nil, nil), 403},
		{"list users unauthenticated", req("GET", "/v1/users", "", nil, nil), 401},
		{"patch user", req("PATCH", "/v1/users/"+u.ID, ad, map[string]string{"role": "admin"}, nil), 200},
		{"patch user invalid", req("PATCH", "/v1/users/"+u.ID, ad, map[string]string{"role": "root"}, nil), 400},
		{"patch user absent", req("PATCH", "/v1/users/"+missingUser, ad, map[string]string{"role": "admin"}, nil), 404},
		{"patch user as member", req("PATCH", "/v1/users/"+u.ID, mb, map[string]string{"role": "member"}, nil), 403},
		{"list keys", req("GET", "/v1/api-keys", ad, nil, nil), 200},
		{"list keys as member", req("GET", "/v1/api-keys", mb, nil, nil), 403},
		{"create key keyed", req("POST", "/v1/api-keys", ad, map[string]any{"scopes": []string{"risks:read"}}, key("spec-key-1")), 422},
		{"create key invalid", req("POST", "/v1/api-keys", ad, map[string]any{"scopes": []string{}}, nil), 400},
		{"revoke key absent", req("DELETE", "/v1/api-keys/"+missingKey, ad, nil, nil), 404},
		{"revoke key", req("DELETE", "/v1/api-keys/"+k.ID, ad, nil, key("spec-revoke-1")), 204},
		{"revoke key replayed", req("DELETE", "/v1/api-keys/"+k.ID, ad, nil, key("spec-revoke-1")), 204},
		{"list sources", req("GET", "/v1/webhook-sources", ad, nil, nil), 200},
		{"list sources as member", req("GET", "/v1/webhook-sources", mb, nil, nil), 403},
		{"create source keyed", req("POST", "/v1/webhook-sources", ad, map[string]string{"source": "keyed"}, key("spec-src-1")), 422},
		{"create source taken", req("POST", "/v1/webhook-sources", ad, map[string]string{"source": "scanner"}, nil), 400},
		{"delete source absent", req("DELETE", "/v1/webhook-sources/"+missingSrc, ad, nil, nil), 404},
		{"delete source", req("DELETE", "/v1/webhook-sources/"+src.ID, ad, nil, nil), 204},
		{"delete user absent", req("DELETE", "/v1/users/"+missingUser, ad, nil, nil), 404},
		{"delete user", req("DELETE", "/v1/users/"+u.ID, ad, nil, nil), 204},
		{"password", req("POST", "/v1/me/password", mb, map[string]string{"currentPassword": member.Password, "newPassword": "password456"}, nil), 204},
	} {
		s.run(t, env, x)
	}
}
