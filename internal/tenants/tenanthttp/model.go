package tenanthttp

import (
	"time"

	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/tenants"
)

type meUser struct {
	ID    string       `json:"id"`
	Email string       `json:"email"`
	Role  tenants.Role `json:"role"`
}

type meTenant struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// meResponse is GET /v1/me.
type meResponse struct {
	User   meUser   `json:"user"`
	Tenant meTenant `json:"tenant"`
}

type passwordRequest struct {
	CurrentPassword string `json:"currentPassword"`
	NewPassword     string `json:"newPassword"`
}

// userResponse is a user as /v1/users shows it: never a password or its hash.
type userResponse struct {
	ID        string       `json:"id"`
	Email     string       `json:"email"`
	Role      tenants.Role `json:"role"`
	CreatedAt time.Time    `json:"createdAt"`
}

func toUser(u tenants.User) userResponse {
	return userResponse{ID: u.ID, Email: u.Email, Role: u.Role, CreatedAt: u.CreatedAt}
}

type createUserRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	Role     string `json:"role"`
}

// validate names the required members that are missing; their content is the
// service's to judge.
func (r createUserRequest) validate() error {
	var errs []problem.FieldError
	for _, f := range []struct{ name, v string }{{"email", r.Email}, {"password", r.Password}, {"role", r.Role}} {
		if f.v == "" {
			errs = append(errs, problem.FieldError{Field: f.name, Detail: "is required"})
		}
	}
	if p := problem.Fields(errs); p != nil {
		return p
	}
	return nil
}

type roleRequest struct {
	Role *string `json:"role"`
}

func (r roleRequest) role() (tenants.Role, error) {
	if r.Role == nil {
		return "", problem.Invalid("role", "is required")
	}
	return tenants.ParseRole(*r.Role)
}

// keyResponse is an API key as /v1/api-keys lists it: never its secret, which is
// not stored.
type keyResponse struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Scopes     []tenants.Scope `json:"scopes"`
	CreatedAt  time.Time       `json:"createdAt"`
	CreatedBy  *creator        `json:"createdBy"` // null for keys older than the audit log
	LastUsedAt *time.Time      `json:"lastUsedAt"`
	RevokedAt  *time.Time      `json:"revokedAt"`
}

// creator is who created a key, as the audit log names actors: type "user",
// "api_key" or "system" (a CLI command, id "").
type creator struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

func toKey(k tenants.APIKey) keyResponse {
	r := keyResponse{ID: k.ID, Name: k.Name, Scopes: k.Scopes, CreatedAt: k.CreatedAt,
		LastUsedAt: k.LastUsedAt, RevokedAt: k.RevokedAt}
	if k.CreatedBy.Type != "" {
		r.CreatedBy = &creator{Type: string(k.CreatedBy.Type), ID: k.CreatedBy.ID}
	}
	return r
}

// createdKey is the one response that carries the key's secret.
type createdKey struct {
	keyResponse
	Key string `json:"key"`
}

type createKeyRequest struct {
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
}

// scopes parses the requested scopes. Errors: VALIDATION_FAILED naming "scopes".
func (r createKeyRequest) scopes() ([]tenants.Scope, error) { return tenants.ScopesOf(r.Scopes) }
