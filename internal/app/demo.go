package app

import (
	"context"
	"errors"

	"github.com/riskapi/riskapi/internal/tenants"
)

// Demo is the demo tenant's credentials, printed once when they are created.
type Demo struct {
	TenantID string `json:"tenantId"`
	Email    string `json:"email"`
	Password string `json:"password"`
	APIKey   string `json:"apiKey"`
}

// DemoTenantName and DemoEmail identify the demo tenant and its user.
const (
	DemoTenantName = "Demo"
	DemoEmail      = "demo@riskapi.local"
)

// EnsureDemo creates the demo tenant, user and API key (every scope) if
// absent and returns their credentials; it returns nil when they exist already, as
// their secrets were shown once and are stored only as hashes.
func (a *App) EnsureDemo(ctx context.Context) (*Demo, error) {
	if _, err := a.Tenants.FindTenantByName(ctx, DemoTenantName); err == nil {
		return nil, nil
	} else if !errors.Is(err, tenants.ErrTenantNotFound) {
		return nil, err
	}
	t, err := a.Tenants.CreateTenant(ctx, DemoTenantName)
	if err != nil {
		return nil, err
	}
	password, err := tenants.NewPassword()
	if err != nil {
		return nil, err
	}
	if _, err := a.Tenants.CreateUser(ctx, t.ID, DemoEmail, password, tenants.RoleAdmin); err != nil {
		return nil, err
	}
	_, secret, err := a.Tenants.CreateAPIKey(ctx, t.ID, "demo", tenants.AllScopes)
	if err != nil {
		return nil, err
	}
	return &Demo{TenantID: t.ID, Email: DemoEmail, Password: password, APIKey: secret}, nil
}

// DemoUser returns the demo tenant's user, for the message that says how to give it
// a new password (api user reset-password). Errors: tenants.ErrUserNotFound.
func (a *Admin) DemoUser(ctx context.Context) (tenants.User, error) {
	return a.Tenants.UserByEmail(ctx, DemoEmail)
}
