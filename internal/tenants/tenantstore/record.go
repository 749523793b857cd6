package tenantstore

import (
	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/tenants/tenantview"
)

// The records of the store's writes show each resource in its public form
// (internal/tenants/tenantview), as the API returns it: never a password, its hash,
// a key's secret or its digest.

func userChange(action changes.Action, before, after *tenants.User) changes.Change {
	c := changes.Change{Action: action}
	if before != nil {
		c.TenantID, c.Target.ID, c.Before = before.TenantID, before.ID, tenantview.UserOf(*before)
	}
	if after != nil {
		c.TenantID, c.Target.ID, c.After = after.TenantID, after.ID, tenantview.UserOf(*after)
	}
	return c
}

// keyChange is the record of a write of an API key: before nil for a creation.
func keyChange(action changes.Action, before *tenants.APIKey, after tenants.APIKey) changes.Change {
	c := changes.Change{TenantID: after.TenantID, Action: action, Target: changes.Target{ID: after.ID},
		After: tenantview.APIKeyOf(after)}
	if before != nil {
		c.Before = tenantview.APIKeyOf(*before)
	}
	return c
}

// tenantChange is the record of t's change to after.
func tenantChange(action changes.Action, before, after tenants.Tenant) changes.Change {
	return changes.Change{TenantID: after.ID, Action: action, Target: changes.Target{ID: after.ID},
		Before: tenantview.TenantOf(before), After: tenantview.TenantOf(after)}
}
