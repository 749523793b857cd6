package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"

	"github.com/riskapi/riskapi/internal/app"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/migrations"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/webhooks"
)

func serve(ctx context.Context, c *command, args []string) error {
	demo := c.boolean("demo", "create a demo tenant, user and API key if absent and print them once")
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	// A busy address fails the start before anything is made: no database file or
	// migration, and no demo credentials spent (they are printed once).
	if err := checkListen(cfg.HTTP.Addr); err != nil {
		return err
	}
	log := logger(c.std.err, slog.LevelInfo)
	a, err := app.Open(ctx, cfg, log, app.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	if *demo {
		d, err := a.EnsureDemo(ctx)
		if err != nil {
			return fmt.Errorf("create demo tenant: %w", err)
		}
		if d != nil {
			if err := printJSON(c.std.out, d); err != nil {
				return err
			}
		} else {
			demoExists(ctx, a, log)
		}
	}
	return a.Serve(ctx, nil)
}

// checkListen reports whether addr can be listened on now, by listening and closing.
func checkListen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln.Close()
}

// demoExists logs why serve --demo printed nothing, and how to get a new password
// for the demo user.
func demoExists(ctx context.Context, a *app.App, log *slog.Logger) {
	const msg = "demo tenant exists already; its credentials were printed once, when it was created"
	u, err := a.DemoUser(ctx)
	if err != nil {
		log.Info(msg + "; give one of its users a new password with api user reset-password --id usr_… (api user list --tenant ID lists them)")
		return
	}
	log.Info(msg+"; for a new password run api user reset-password --id "+u.ID+
		", for another API key api apikey create --tenant "+u.TenantID+" --scopes risks:read,risks:write",
		slog.String("userId", u.ID), slog.String("tenantId", u.TenantID))
}

func migrate(ctx context.Context, c *command, args []string) error {
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	db, err := database.Open(ctx, cfg.Database.URL, database.Options{Pooler: cfg.Database.Pooler,
		Logger: logger(c.std.err, slog.LevelWarn)})
	if err != nil {
		return err
	}
	defer db.Close()
	n, err := migrations.Apply(ctx, db)
	if err != nil {
		return err
	}
	return printJSON(c.std.out, map[string]int{"applied": n})
}

func sweep(ctx context.Context, c *command, args []string) error {
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	a, err := app.OpenMaintenance(ctx, cfg, logger(c.std.err, slog.LevelWarn), app.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	n, err := a.Sweep(ctx)
	if err != nil {
		return err
	}
	return printJSON(c.std.out, map[string]int{"deleted": n})
}

func tenantCreate(ctx context.Context, c *command, args []string) error {
	name := c.str("name", "", "tenant name, 1–200 characters (required)")
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	if strings.TrimSpace(*name) == "" {
		return usagef("tenant create: --name is required")
	}
	return withApp(ctx, cfg, c, func(a *app.Admin) error {
		t, err := a.Tenants.CreateTenant(ctx, *name)
		if err != nil {
			return err
		}
		return printJSON(c.std.out, t)
	})
}

func userCreate(ctx context.Context, c *command, args []string) error {
	tenant := c.str("tenant", "", "tenant ID (required)")
	email := c.str("email", "", "email address, the sign-in name (required)")
	password := c.str("password", "", "password, 8–72 characters, at most 72 bytes (this or --password-stdin)")
	fromStdin := c.boolean("password-stdin", "read the password from the first line of standard input")
	role := c.str("role", string(tenants.RoleAdmin), "admin or member")
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	pw, err := c.password(*password, *fromStdin)
	if err != nil {
		return err
	}
	if *tenant == "" || *email == "" || pw == "" {
		return usagef("user create: --tenant, --email and --password (or --password-stdin) are required")
	}
	r, err := tenants.ParseRole(*role)
	if err != nil {
		return usagef("user create: --role must be admin or member, got %q", *role)
	}
	return withApp(ctx, cfg, c, func(a *app.Admin) error {
		u, err := a.Tenants.CreateUser(ctx, *tenant, *email, pw, r)
		if err != nil {
			return err
		}
		return printJSON(c.std.out, u)
	})
}

func apikeyCreate(ctx context.Context, c *command, args []string) error {
	tenant := c.str("tenant", "", "tenant ID (required)")
	scopes := c.str("scopes", "", scopesUsage())
	name := c.str("name", "", "a label for the key")
	modeName := c.str("mode", "live", "live, or test: the key reaches only the tenant's sandbox (docs/sandboxes.md)")
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	if *tenant == "" {
		return usagef("apikey create: --tenant is required")
	}
	sc, err := tenants.ParseScopes(*scopes)
	if err != nil {
		return usagef("apikey create: %v", problem.As(err).Detail)
	}
	mode, err := tenants.ParseMode("mode", *modeName)
	if err != nil {
		return usagef("apikey create: --mode must be live or test")
	}
	return withApp(ctx, cfg, c, func(a *app.Admin) error {
		k, secret, err := a.Tenants.CreateModeAPIKey(ctx, *tenant, *name, sc, mode)
		if err != nil {
			return err
		}
		return printJSON(c.std.out, struct {
			ID       string          `json:"id"`
			TenantID string          `json:"tenantId"`
			Name     string          `json:"name,omitempty"`
			Key      string          `json:"key"`
			Scopes   []tenants.Scope `json:"scopes"`
			Mode     tenants.Mode    `json:"mode"`
		}{k.ID, k.TenantID, k.Name, secret, k.Scopes, k.Mode})
	})
}

// scopesUsage describes --scopes: every scope with what it allows, from the one
// list (tenants.AllScopes), one per line under the flag in help.
func scopesUsage() string {
	var b strings.Builder
	b.WriteString("comma-separated scopes, one or more of (required):")
	for _, s := range tenants.AllScopes {
		fmt.Fprintf(&b, "\n          %-14s %s", s, s.Allows())
	}
	return b.String()
}

func apikeyRevoke(ctx context.Context, c *command, args []string) error {
	id := c.str("id", "", "API key ID (required)")
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	if *id == "" {
		return usagef("apikey revoke: --id is required")
	}
	return withApp(ctx, cfg, c, func(a *app.Admin) error {
		if err := a.Tenants.RevokeAPIKeyByID(ctx, *id); err != nil {
			return err
		}
		return printJSON(c.std.out, map[string]any{"id": *id, "revoked": true})
	})
}

// withApp opens riskapi's narrow administration setup (app.Admin) quietly, runs f,
// and turns input errors into usage errors (exit 2): any VALIDATION_FAILED problem,
// and the not-found sentinels.
func withApp(ctx context.Context, cfg config.Config, c *command, f func(*app.Admin) error) error {
	a, err := app.OpenAdmin(ctx, cfg, logger(c.std.err, slog.LevelWarn), app.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	err = f(a)
	if p := problem.As(err); p != nil && p.Code == problem.ValidationFailed {
		return usagef("%s: %s", c.name, p.Detail)
	}
	for _, nf := range []error{tenants.ErrTenantNotFound, tenants.ErrUserNotFound, tenants.ErrAPIKeyNotFound, webhooks.ErrSourceNotFound} {
		if errors.Is(err, nf) {
			return usagef("%s: %v", c.name, nf)
		}
	}
	return err
}
