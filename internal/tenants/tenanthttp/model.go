package tenanthttp

import (
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/tenants/tenantview"
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

// createdKey is the one response that carries the key's secret, which is not
// stored.
type createdKey struct {
	tenantview.APIKey
	Key string `json:"key"`
}

type createKeyRequest struct {
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
	// Mode is "live" (the default) or "test" (docs/sandboxes.md).
	Mode string `json:"mode"`
}

// scopes parses the requested scopes. Errors: VALIDATION_FAILED naming "scopes".
func (r createKeyRequest) scopes() ([]tenants.Scope, error) { return tenants.ScopesOf(r.Scopes) }
