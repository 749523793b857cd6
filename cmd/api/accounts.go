package main

import (
	"context"
	"time"

	"github.com/riskapi/riskapi/internal/app"
	"github.com/riskapi/riskapi/internal/tenants"
)

// listPage is how many rows a list command reads per query.
const listPage = 100

func tenantList(ctx context.Context, c *command, args []string) error {
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	return withApp(ctx, cfg, c, func(a *app.Admin) error {
		ts, err := a.Tenants.Tenants(ctx)
		if err != nil {
			return err
		}
		for _, t := range ts {
			if err := printJSON(c.std.out, struct {
				ID         string     `json:"id"`
				Name       string     `json:"name"`
				CreatedAt  time.Time  `json:"createdAt"`
				DisabledAt *time.Time `json:"disabledAt"`
			}{t.ID, t.Name, t.CreatedAt, t.DisabledAt}); err != nil {
				return err
			}
		}
		return nil
	})
}

func tenantDisable(ctx context.Context, c *command, args []string) error {
	return setTenantDisabled(ctx, c, args, true)
}

func tenantEnable(ctx context.Context, c *command, args []string) error {
	return setTenantDisabled(ctx, c, args, false)
}

func setTenantDisabled(ctx context.Context, c *command, args []string, disabled bool) error {
	id := c.str("id", "", "tenant ID (required)")
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	if *id == "" {
		return usagef("%s: --id is required", c.name)
	}
	return withApp(ctx, cfg, c, func(a *app.Admin) error {
		if err := a.Tenants.SetTenantDisabled(ctx, *id, disabled); err != nil {
			return err
		}
		return printJSON(c.std.out, map[string]any{"id": *id, "disabled": disabled})
	})
}

func userDelete(ctx context.Context, c *command, args []string) error {
	id := c.str("id", "", "user ID (required)")
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	if *id == "" {
		return usagef("user delete: --id is required")
	}
	return withApp(ctx, cfg, c, func(a *app.Admin) error {
		u, err := a.Tenants.UserByID(ctx, *id)
		if err != nil {
			return err
		}
		// Its sessions end with its row: a session is read joined to its user.
		if err := a.Tenants.DeleteUser(ctx, u.TenantID, u.ID, nil); err != nil {
			return err
		}
		return printJSON(c.std.out, map[string]any{"id": u.ID, "deleted": true})
	})
}

func userResetPassword(ctx context.Context, c *command, args []string) error {
	id := c.str("id", "", "user ID (required; api user list --tenant ID lists them)")
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	if *id == "" {
		return usagef("user reset-password: --id is required")
	}
	return withApp(ctx, cfg, c, func(a *app.Admin) error {
		u, password, err := a.ResetPassword(ctx, *id)
		if err != nil {
			return err
		}
		return printJSON(c.std.out, struct {
			ID       string `json:"id"`
			TenantID string `json:"tenantId"`
			Email    string `json:"email"`
			Password string `json:"password"`
		}{u.ID, u.TenantID, u.Email, password})
	})
}

func userList(ctx context.Context, c *command, args []string) error {
	return tenantRows(ctx, c, args, func(a *app.Admin, tenant string) error {
		list := func(p tenants.Page) ([]tenants.User, bool, error) { return a.Tenants.Users(ctx, tenant, p) }
		return eachPage(list, func(u tenants.User) (string, error) {
			return u.ID, printJSON(c.std.out, struct {
				tenants.User
				CreatedAt time.Time `json:"createdAt"`
			}{u, u.CreatedAt})
		})
	})
}

func apikeyList(ctx context.Context, c *command, args []string) error {
	return tenantRows(ctx, c, args, func(a *app.Admin, tenant string) error {
		list := func(p tenants.Page) ([]tenants.APIKey, bool, error) { return a.Tenants.APIKeys(ctx, tenant, p) }
		return eachPage(list, func(k tenants.APIKey) (string, error) {
			return k.ID, printJSON(c.std.out, struct {
				ID         string          `json:"id"`
				TenantID   string          `json:"tenantId"`
				Name       string          `json:"name"`
				Scopes     []tenants.Scope `json:"scopes"`
				CreatedAt  time.Time       `json:"createdAt"`
				LastUsedAt *time.Time      `json:"lastUsedAt"`
				RevokedAt  *time.Time      `json:"revokedAt"`
			}{k.ID, k.TenantID, k.Name, k.Scopes, k.CreatedAt, k.LastUsedAt, k.RevokedAt})
		})
	})
}

// tenantRows is a per-tenant list command: it takes --tenant (required, and must
// name a tenant), opens riskapi and runs print.
func tenantRows(ctx context.Context, c *command, args []string, print func(a *app.Admin, tenant string) error) error {
	tenant := c.str("tenant", "", "tenant ID (required)")
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	if *tenant == "" {
		return usagef("%s: --tenant is required", c.name)
	}
	return withApp(ctx, cfg, c, func(a *app.Admin) error {
		if _, err := a.Tenants.GetTenant(ctx, *tenant); err != nil {
			return err
		}
		return print(a, *tenant)
	})
}

// eachPage walks every page of list, newest first, calling row on each row; row
// returns the row's ID (the next page's cursor) and its error.
func eachPage[T any](list func(tenants.Page) ([]T, bool, error), row func(T) (string, error)) error {
	p := tenants.Page{Limit: listPage}
	for {
		rows, more, err := list(p)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if p.Before, err = row(r); err != nil {
				return err
			}
		}
		if !more {
			return nil
		}
	}
}
