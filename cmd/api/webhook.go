package main

import (
	"context"
	"errors"

	"github.com/riskapi/riskapi/internal/app"
	"github.com/riskapi/riskapi/internal/webhooks"
)

// webhookCreate configures an inbound webhook source for a tenant and prints its
// signing secret, shown this once on stdout (docs/uploads-and-webhooks.md, Setting up a source).
func webhookCreate(ctx context.Context, c *command, args []string) error {
	tenant := c.str("tenant", "", "tenant ID (required)")
	source := c.str("source", "", "source name, the path segment of /webhooks/inbound/{source} (required)")
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	if *tenant == "" || *source == "" {
		return usagef("webhook create: --tenant and --source are required")
	}
	if !webhooks.ValidSourceName(*source) {
		return usagef("webhook create: --source: %v", webhooks.ErrInvalidSourceName)
	}
	return withApp(ctx, cfg, c, func(a *app.Admin) error {
		if _, err := a.Tenants.GetTenant(ctx, *tenant); err != nil {
			return err // tenants.ErrTenantNotFound becomes a usage error in withApp
		}
		src, err := a.Webhooks.CreateSource(ctx, *tenant, *source)
		if errors.Is(err, webhooks.ErrSourceExists) {
			return usagef("webhook create: source %q exists already", *source)
		}
		if err != nil {
			return err
		}
		return printJSON(c.std.out, struct {
			ID       string `json:"id"`
			TenantID string `json:"tenantId"`
			Source   string `json:"source"`
			Secret   string `json:"secret"`
		}{src.ID, src.TenantID, src.Name, src.Secret})
	})
}
