package tenanthttp

import (
	"time"

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
	// ExpiresAt, optional, is when the key stops working.
	ExpiresAt *time.Time `json:"expiresAt"`
	// AllowedCidrs, optional, are the only networks it may be used from.
	AllowedCidrs []string `json:"allowedCidrs"`
}

// scopes parses the requested scopes. Errors: VALIDATION_FAILED naming "scopes".
func (r createKeyRequest) scopes() ([]tenants.Scope, error) { return tenants.ScopesOf(r.Scopes) }

// options parses the key's expiry, networks and mode. Errors: VALIDATION_FAILED
// naming "allowedCidrs" or "mode".
func (r createKeyRequest) options() (tenants.KeyOptions, error) {
	cidrs, err := tenants.ParseCIDRs(r.AllowedCidrs)
	if err != nil {
		return tenants.KeyOptions{}, err
	}
	mode, err := tenants.ParseMode("mode", r.Mode)
	if err != nil {
		return tenants.KeyOptions{}, err
	}
	return tenants.KeyOptions{ExpiresAt: r.ExpiresAt, AllowedCidrs: cidrs, Mode: mode}, nil
}

// rollKeyRequest is POST /v1/api-keys/{id}/roll's body.
type rollKeyRequest struct {
	// ExpiresIn is how many seconds the old secret keeps working: 0–604800.
	ExpiresIn *int64 `json:"expiresIn"`
	// NewKeyExpiresAt, optional, is when the new key stops working; without it the
	// new key has no expiry (an old key's expiry is not carried over: a roll is how
	// an expiring key is replaced).
	NewKeyExpiresAt *time.Time `json:"newKeyExpiresAt"`
}

// overlap is the old secret's remaining life. Errors: VALIDATION_FAILED naming
// "expiresIn".
func (r rollKeyRequest) overlap() (time.Duration, error) {
	if r.ExpiresIn == nil {
		return 0, problem.Invalid("expiresIn", "is required (0–604800 seconds)")
	}
	if *r.ExpiresIn < 0 || *r.ExpiresIn > int64(tenants.MaxRollOverlap/time.Second) {
		return 0, problem.Invalid("expiresIn", "must be 0–604800 seconds")
	}
	return time.Duration(*r.ExpiresIn) * time.Second, nil
}

// rolledKey answers a roll: the new key with its secret, shown this once, and the
// old key as it is now (its expiresAt the end of the overlap).
type rolledKey struct {
	tenantview.APIKey
	Key      string            `json:"key"`
	Previous tenantview.APIKey `json:"previous"`
}
