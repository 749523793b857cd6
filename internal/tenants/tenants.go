// Package tenants owns the accounts side of riskapi: tenants, their users and their
// API keys. Every other row in riskapi belongs to a tenant created here.
//
// Secrets never leave this package in stored form: passwords are kept as bcrypt
// hashes, API keys as SHA-256 digests of high-entropy secrets.
package tenants

import (
	"errors"
	"slices"
	"strings"
	"time"
)

// Scope is a permission an API key carries.
type Scope string

// The scopes of the contract (docs/openapi.yaml).
const (
	ScopeRisksRead  Scope = "risks:read"
	ScopeRisksWrite Scope = "risks:write"
)

// AllScopes lists every scope; session users hold all of them.
var AllScopes = []Scope{ScopeRisksRead, ScopeRisksWrite}

// ParseScopes parses a comma-separated list such as "risks:read,risks:write".
// It returns ErrInvalidInput for an empty list or an unknown scope.
func ParseScopes(s string) ([]Scope, error) {
	var out []Scope
	for _, part := range strings.Split(s, ",") {
		sc := Scope(strings.TrimSpace(part))
		if sc == "" {
			continue
		}
		if !slices.Contains(AllScopes, sc) {
			return nil, &InputError{Field: "scopes", Detail: "unknown scope " + string(sc) + " (want risks:read, risks:write)"}
		}
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	if len(out) == 0 {
		return nil, &InputError{Field: "scopes", Detail: "at least one scope is required"}
	}
	return out, nil
}

// Tenant is an isolated customer account.
type Tenant struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"-"`
}

// User is a person who signs in to a tenant with email and password.
type User struct {
	ID        string    `json:"id"`
	TenantID  string    `json:"tenantId"`
	Email     string    `json:"email"`
	CreatedAt time.Time `json:"-"`
}

// APIKey is a tenant's credential for /v2. Its secret is known only at creation.
type APIKey struct {
	ID         string     `json:"id"`
	TenantID   string     `json:"tenantId"`
	Name       string     `json:"name,omitempty"`
	Scopes     []Scope    `json:"scopes"`
	CreatedAt  time.Time  `json:"-"`
	RevokedAt  *time.Time `json:"-"`
	LastUsedAt *time.Time `json:"-"`
}

// Has reports whether k carries scope.
func (k APIKey) Has(scope Scope) bool { return slices.Contains(k.Scopes, scope) }

// Errors returned by Service.
var (
	// ErrNotFound: no tenant, user or key with that ID.
	ErrNotFound = errors.New("not found")
	// ErrInvalidCredentials: unknown email, wrong password, unknown or revoked key.
	// One error for all, so callers cannot tell which part was wrong.
	ErrInvalidCredentials = errors.New("invalid credentials")
	// ErrEmailTaken: a user with that email exists already.
	ErrEmailTaken = errors.New("email already registered")
)

// InputError is invalid input naming its field.
type InputError struct{ Field, Detail string }

// Error returns "<field>: <detail>".
func (e *InputError) Error() string { return e.Field + ": " + e.Detail }
