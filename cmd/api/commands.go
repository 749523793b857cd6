package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/riskapi/riskapi/internal/app"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/migrations"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/tenants"
)

// command is a parsed command line: its flag set, configuration and the parts of
// the configuration it uses.
type command struct {
	fs    *flag.FlagSet
	vals  *config.Values
	parts []config.Part
}

// newCommand registers every setting's flag (any is accepted, and checked if given)
// but loads only parts (every part when none), so a variable meant for another
// command cannot stop this one.
func newCommand(name string, getenv func(string) string, parts ...config.Part) *command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported in one line by main
	return &command{fs: fs, vals: config.Register(fs, getenv), parts: parts}
}

// adminParts are what the tenant, user, API key and webhook commands use.
var adminParts = []config.Part{config.PartDatabase}

// parse parses args and loads the configuration; every failure is a usage error.
func (c *command) parse(args []string) (config.Config, error) {
	if err := c.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return config.Config{}, helpRequest{fmt.Sprintf("usage: api %s [flags]\nflags: %s", c.fs.Name(), flagNames(c.fs))}
		}
		return config.Config{}, usagef("%s: %v", c.fs.Name(), err)
	}
	if c.fs.NArg() > 0 {
		return config.Config{}, usagef("%s: unexpected argument %q", c.fs.Name(), c.fs.Arg(0))
	}
	cfg, err := config.Load(c.vals, c.parts...)
	if err != nil {
		return cfg, usageError{err.Error()}
	}
	return cfg, nil
}

func flagNames(fs *flag.FlagSet) string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
	return strings.Join(names, " ")
}

func logger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

func printJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c := newCommand("serve", getenv)
	demo := c.fs.Bool("demo", false, "create a demo tenant, user and API key if absent and print them")
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	log := logger(stderr, slog.LevelInfo)
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
			if err := printJSON(stdout, d); err != nil {
				return err
			}
		} else {
			log.Info("demo tenant exists already; its credentials were printed once, when it was created (start over with a fresh DATABASE_URL)")
		}
	}
	return a.Serve(ctx, nil)
}

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := newCommand("migrate", getenv, config.PartDatabase).parse(args)
	if err != nil {
		return err
	}
	db, err := database.Open(ctx, cfg.Database.URL, database.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	n, err := migrations.Apply(ctx, db)
	if err != nil {
		return err
	}
	return printJSON(stdout, map[string]int{"applied": n})
}

func sweep(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := newCommand("sweep", getenv, config.PartDatabase, config.PartAuth, config.PartIdempotency,
		config.PartUploads).parse(args)
	if err != nil {
		return err
	}
	a, err := app.OpenMaintenance(ctx, cfg, logger(stderr, slog.LevelWarn), app.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	n, err := a.Sweep(ctx)
	if err != nil {
		return err
	}
	return printJSON(stdout, map[string]int{"deleted": n})
}

func tenantCreate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c := newCommand("tenant create", getenv, adminParts...)
	name := c.fs.String("name", "", "tenant name (required)")
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	if strings.TrimSpace(*name) == "" {
		return usagef("tenant create: --name is required")
	}
	return withApp(ctx, cfg, stderr, func(a *app.Admin) error {
		t, err := a.Tenants.CreateTenant(ctx, *name)
		if err != nil {
			return err
		}
		return printJSON(stdout, t)
	})
}

func userCreate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c := newCommand("user create", getenv, adminParts...)
	tenant := c.fs.String("tenant", "", "tenant ID (required)")
	email := c.fs.String("email", "", "email (required)")
	password := c.fs.String("password", "", "password, 8–72 bytes (required)")
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	if *tenant == "" || *email == "" || *password == "" {
		return usagef("user create: --tenant, --email and --password are required")
	}
	return withApp(ctx, cfg, stderr, func(a *app.Admin) error {
		u, err := a.Tenants.CreateUser(ctx, *tenant, *email, *password)
		if err != nil {
			return err
		}
		return printJSON(stdout, u)
	})
}

func apikeyCreate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c := newCommand("apikey create", getenv, adminParts...)
	tenant := c.fs.String("tenant", "", "tenant ID (required)")
	scopes := c.fs.String("scopes", "", "comma-separated: risks:read,risks:write (required)")
	name := c.fs.String("name", "", "a label for the key")
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	if *tenant == "" {
		return usagef("apikey create: --tenant is required")
	}
	sc, err := tenants.ParseScopes(*scopes)
	if err != nil {
		return usagef("apikey create: %v", err)
	}
	return withApp(ctx, cfg, stderr, func(a *app.Admin) error {
		k, secret, err := a.Tenants.CreateAPIKey(ctx, *tenant, *name, sc)
		if err != nil {
			return err
		}
		return printJSON(stdout, struct {
			ID       string          `json:"id"`
			TenantID string          `json:"tenantId"`
			Name     string          `json:"name,omitempty"`
			Key      string          `json:"key"`
			Scopes   []tenants.Scope `json:"scopes"`
		}{k.ID, k.TenantID, k.Name, secret, k.Scopes})
	})
}

func apikeyRevoke(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c := newCommand("apikey revoke", getenv, adminParts...)
	id := c.fs.String("id", "", "API key ID (required)")
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	if *id == "" {
		return usagef("apikey revoke: --id is required")
	}
	return withApp(ctx, cfg, stderr, func(a *app.Admin) error {
		if err := a.Tenants.RevokeAPIKey(ctx, *id); err != nil {
			return err
		}
		return printJSON(stdout, map[string]any{"id": *id, "revoked": true})
	})
}

// withApp opens riskapi's narrow administration setup (app.Admin) quietly, runs f,
// and turns the services' input errors into usage errors (exit 2).
func withApp(ctx context.Context, cfg config.Config, stderr io.Writer, f func(*app.Admin) error) error {
	a, err := app.OpenAdmin(ctx, cfg, logger(stderr, slog.LevelWarn), app.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	err = f(a)
	if p := problem.As(err); p != nil && p.Code == problem.ValidationFailed {
		return usageError{p.Detail}
	}
	for _, nf := range []error{tenants.ErrTenantNotFound, tenants.ErrUserNotFound, tenants.ErrAPIKeyNotFound} {
		if errors.Is(err, nf) {
			return usageError{nf.Error()}
		}
	}
	return err
}
