package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

// healthcheckTimeout bounds the whole check: a container runtime's HEALTHCHECK
// gives up on its own after its timeout, but a check must never hang.
const healthcheckTimeout = 3 * time.Second

// healthcheck asks the server listening on ADDR (on this host) for GET /healthz
// and exits 0 on 200, 1 otherwise: the container image's HEALTHCHECK, which has no
// curl or shell (docs/deploying.md, Containers). --ready asks /readyz instead: can
// the instance serve writes.
func healthcheck(ctx context.Context, c *command, args []string) error {
	ready := c.boolean("ready", "ask /readyz (the store takes a write) instead of /healthz")
	cfg, err := c.parse(args)
	if err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(cfg.HTTP.Addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1" // listening on every address: ask on loopback
	}
	path := "/healthz"
	if *ready {
		path = "/readyz"
	}
	ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(host, port)+path, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %d", path, res.StatusCode)
	}
	return nil
}
