// Package tenantview is the public shape of a tenant's accounts, in one place: the
// JSON of /v1/users and /v1/api-keys, and the object each recorded change of a user,
// an API key or a tenant shows (its audit entry's changes; an event's data.object,
// were the action an event type). It never holds a password, its hash, a key's
// secret or its digest.
package tenantview

import (
	"time"

	"github.com/riskapi/riskapi/internal/tenants"
)

// User is a user as the API shows it (docs/openapi.yaml, User).
type User struct {
	ID        string       `json:"id"`
	Email     string       `json:"email"`
	Role      tenants.Role `json:"role"`
	CreatedAt time.Time    `json:"createdAt"`
}

// UserOf returns u as the API shows it.
func UserOf(u tenants.User) User {
	return User{ID: u.ID, Email: u.Email, Role: u.Role, CreatedAt: u.CreatedAt.UTC()}
}

// Creator is who created an API key, as the audit log names actors: type "user",
// "api_key" or "system" (a CLI command, id "").
type Creator struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// APIKey is an API key as the API shows it (docs/openapi.yaml, ApiKey).
type APIKey struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Scopes []tenants.Scope `json:"scopes"`
	// Mode is live or test (docs/sandboxes.md); Livemode says the same as the
	// livemode of every other object.
	Mode      tenants.Mode `json:"mode"`
	Livemode  bool         `json:"livemode"`
	CreatedAt time.Time    `json:"createdAt"`
	// CreatedBy is null for keys created before the audit log.
	CreatedBy  *Creator   `json:"createdBy"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
	RevokedAt  *time.Time `json:"revokedAt"`
	// ExpiresAt is when the key stops working, null for never (a roll sets the old
	// key's to the end of its overlap).
	ExpiresAt *time.Time `json:"expiresAt"`
	// AllowedCidrs are the networks it may be used from; empty: anywhere.
	AllowedCidrs []string `json:"allowedCidrs"`
	// RolledTo is the ID of the key that replaced it, null if never rolled.
	RolledTo *string `json:"rolledTo"`
}

// APIKeyOf returns k as the API shows it.
func APIKeyOf(k tenants.APIKey) APIKey {
	v := APIKey{ID: k.ID, Name: k.Name, Scopes: k.Scopes, Mode: k.Mode, Livemode: k.Mode != tenants.ModeTest,
		CreatedAt:  k.CreatedAt.UTC(),
		LastUsedAt: utc(k.LastUsedAt), RevokedAt: utc(k.RevokedAt), ExpiresAt: utc(k.ExpiresAt),
		AllowedCidrs: make([]string, len(k.AllowedCidrs))}
	for i, p := range k.AllowedCidrs {
		v.AllowedCidrs[i] = p.String()
	}
	if k.RolledTo != "" {
		v.RolledTo = &k.RolledTo
	}
	if k.CreatedBy.Type != "" {
		v.CreatedBy = &Creator{Type: string(k.CreatedBy.Type), ID: k.CreatedBy.ID}
	}
	return v
}

// Tenant is a tenant as its recorded changes show it (tenant.disabled,
// tenant.enabled). GET /v1/me shows its id and name (contract section 3).
type Tenant struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Disabled bool   `json:"disabled"`
	// APIVersion is the tenant's pinned API version (docs/api-versions.md).
	APIVersion string `json:"apiVersion"`
}

// TenantOf returns t as its recorded changes show it.
func TenantOf(t tenants.Tenant) Tenant {
	return Tenant{ID: t.ID, Name: t.Name, Disabled: t.DisabledAt != nil, APIVersion: t.APIVersion}
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// Resource implements changes.View.
func (User) Resource() string { return "user" }

// Resource implements changes.View.
func (APIKey) Resource() string { return "api_key" }

// Resource implements changes.View.
func (Tenant) Resource() string { return "tenant" }
