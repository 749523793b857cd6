package tenantstore

import (
	"time"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/tenants"
)

// userView is a user as its recorded changes show it: never its password or hash.
type userView struct {
	ID    string       `json:"id"`
	Email string       `json:"email"`
	Role  tenants.Role `json:"role"`
}

func userChange(action changes.Action, before, after *tenants.User) changes.Change {
	c := changes.Change{Action: action, Target: changes.Target{Type: "user"}}
	if before != nil {
		c.TenantID, c.Target.ID, c.Before = before.TenantID, before.ID, userView{before.ID, before.Email, before.Role}
	}
	if after != nil {
		c.TenantID, c.Target.ID, c.After = after.TenantID, after.ID, userView{after.ID, after.Email, after.Role}
	}
	return c
}

// creatorView is who created an API key.
type creatorView struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// keyView is an API key as its recorded changes show it: never its secret or its
// digest.
type keyView struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Scopes    []tenants.Scope `json:"scopes"`
	CreatedBy creatorView     `json:"createdBy"`
	RevokedAt *time.Time      `json:"revokedAt"`
}

func viewOfKey(k tenants.APIKey) keyView {
	return keyView{ID: k.ID, Name: k.Name, Scopes: k.Scopes, RevokedAt: k.RevokedAt,
		CreatedBy: creatorView{Type: string(k.CreatedBy.Type), ID: k.CreatedBy.ID}}
}

func keyChange(action changes.Action, k tenants.APIKey, before, after any) changes.Change {
	return changes.Change{TenantID: k.TenantID, Action: action, Target: changes.Target{Type: "api_key", ID: k.ID},
		Before: before, After: after}
}

// tenantView is a tenant as tenant.disabled and tenant.enabled show it.
type tenantView struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Disabled bool   `json:"disabled"`
}
