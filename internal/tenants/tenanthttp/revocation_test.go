package tenanthttp_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/tenants"
)

// TestRevocationHoldsOnEveryInstance: a removed user, a changed password, a revoked
// key and a disabled tenant are refused from the next request on, by the instance
// that made the change and by a second instance on the same database, each having
// served the credential just before (nothing cached outlives the change).
func TestRevocationHoldsOnEveryInstance(t *testing.T) {
	t.Parallel()
	one := apitest.New(t)
	two := one.Twin()
	a := one.Tenant("Acme")
	admin := one.User(a.ID, tenants.RoleAdmin)
	risks := func(env *apitest.Env, tok string) int {
		return env.Do(apitest.Request{Method: "GET", Path: "/v1/risks", Bearer: tok}).Code
	}
	both := func(name, tok string, want int) {
		t.Helper()
		if a, b := risks(one, tok), risks(two, tok); a != want || b != want {
			t.Errorf("%s: instance one %d, instance two %d, want %d", name, a, b, want)
		}
	}

	t.Run("removed user", func(t *testing.T) {
		victim := one.User(a.ID, tenants.RoleMember)
		both("before", victim.Token, http.StatusOK)
		one.Do(apitest.Request{Method: "DELETE", Path: "/v1/users/" + victim.ID, Bearer: admin.Token}).Expect(http.StatusNoContent)
		both("after DELETE /v1/users", victim.Token, http.StatusUnauthorized)
	})

	t.Run("changed password", func(t *testing.T) {
		u := one.User(a.ID, tenants.RoleMember)
		other := apitest.LoginAs(t, two, u.Email, u.Password).Token
		both("before", other, http.StatusOK)
		one.Do(apitest.Request{Method: "POST", Path: "/v1/me/password", Bearer: u.Token,
			JSON: map[string]string{"currentPassword": "wrong password", "newPassword": "new password 1"}}).
			ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
		both("after a refused change", other, http.StatusOK)
		one.Do(apitest.Request{Method: "POST", Path: "/v1/me/password", Bearer: u.Token,
			JSON: map[string]string{"currentPassword": u.Password, "newPassword": "new password 1"}}).Expect(http.StatusNoContent)
		both("the other session", other, http.StatusUnauthorized)
		both("the calling session", u.Token, http.StatusOK)
		two.Do(apitest.Request{Method: "POST", Path: "/v1/sessions", JSON: map[string]string{"email": u.Email, "password": u.Password}}).
			ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
		both("a new session", apitest.LoginAs(t, two, u.Email, "new password 1").Token, http.StatusOK)
	})

	t.Run("revoked key", func(t *testing.T) {
		var k struct{ ID, Key string }
		one.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Bearer: admin.Token,
			JSON: map[string]any{"scopes": []string{"risks:read"}}}).Expect(http.StatusCreated).Decode(&k)
		get := apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: k.Key}
		two.Do(get).Expect(http.StatusOK)
		one.Do(apitest.Request{Method: "DELETE", Path: "/v1/api-keys/" + k.ID, Bearer: admin.Token}).Expect(http.StatusNoContent)
		two.Do(get).ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
		one.Do(get).ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
	})

	t.Run("disabled tenant", func(t *testing.T) {
		b := one.Tenant("Globex")
		u := one.User(b.ID, tenants.RoleAdmin)
		get := apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: b.Key}
		two.Do(get).Expect(http.StatusOK)
		both("before", u.Token, http.StatusOK)
		ctx := context.Background()
		if err := one.App.Tenants.SetTenantDisabled(ctx, b.ID, true); err != nil {
			t.Fatal(err)
		}
		two.Do(get).ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
		both("session of a disabled tenant", u.Token, http.StatusUnauthorized)
		two.Do(apitest.Request{Method: "POST", Path: "/v1/sessions", JSON: map[string]string{"email": u.Email, "password": u.Password}}).
			ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
		both("another tenant", admin.Token, http.StatusOK)
		if err := one.App.Tenants.SetTenantDisabled(ctx, b.ID, false); err != nil {
			t.Fatal(err)
		}
		two.Do(get).Expect(http.StatusOK)
		both("enabled again", u.Token, http.StatusOK)
	})
}
