package tenanthttp_test

import (
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/tenants"
)

// TestOwnAccountKeysArePerUser: records of POST /v1/me/password belong to the user
// who sent them. A colleague reusing the key — seen in the request log — runs a
// fresh request: their guess of the body is never confirmed by a replay, nor told
// wrong by a 422 (issue 25, item 3); the owner's retry still replays.
func TestOwnAccountKeysArePerUser(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	alice := env.User(a.ID, tenants.RoleMember)
	bob := env.User(a.ID, tenants.RoleMember)
	key := http.Header{"Idempotency-Key": {"own-password-1"}}
	change := func(u *apitest.User, current string) *apitest.Response {
		return env.Do(apitest.Request{Method: "POST", Path: "/v1/me/password", Bearer: u.Token, Header: key,
			JSON: map[string]string{"currentPassword": current, "newPassword": "alice new password"}})
	}
	change(alice, alice.Password).Expect(http.StatusNoContent)

	// Bob guesses Alice's body exactly: not a replay — his own request runs, and his
	// current password is not Alice's.
	if res := change(bob, alice.Password+"x"); res.Code == http.StatusNoContent || res.Code == http.StatusUnprocessableEntity {
		t.Fatalf("a colleague's wrong guess under the owner's key: %d %s, want the handler's own refusal", res.Code, res.Body.String())
	}
	res := change(bob, alice.Password)
	if res.Header().Get("Idempotent-Replayed") == "true" {
		t.Fatalf("a colleague's request under the owner's key was answered by the owner's record: %d", res.Code)
	}
	if res.Code == http.StatusUnprocessableEntity {
		t.Fatalf("a colleague's other body under the owner's key: 422 %s, want a fresh request", res.Body.String())
	}
	// Bob's own key works for him, and Alice's retry replays hers.
	change(bob, bob.Password).Expect(http.StatusNoContent)
	if res := change(alice, alice.Password); res.Code != http.StatusNoContent || res.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("the owner's retry: %d replayed=%q, want 204 replayed", res.Code, res.Header().Get("Idempotent-Replayed"))
	}
}
