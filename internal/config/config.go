// Package config reads riskapi's configuration once, from the environment and the
// command line (a flag overrides the variable of the same name), and validates it.
// No other package reads the environment.
package config

import (
	"flag"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Config is riskapi's configuration (api-contract.md section 1).
type Config struct {
	Addr                string        // ADDR, default ":8080"
	DatabaseURL         string        // DATABASE_URL, default "sqlite://data/riskapi.db"
	JWTSecret           string        // JWT_SECRET, default: generated and stored in the database
	IdempotencyTTL      time.Duration // IDEMPOTENCY_TTL, default 24h
	IdempotencyLease    time.Duration // IDEMPOTENCY_LEASE, default 1m
	IdempotencyRequired bool          // IDEMPOTENCY_REQUIRED, default false
	SweepSchedule       string        // SWEEP_SCHEDULE, robfig/cron spec, default "@every 10m"
	UploadDir           string        // UPLOAD_DIR, default "data/uploads"
	MaxUploadBytes      int64         // MAX_UPLOAD_BYTES, default 1 GiB
	RateLimitRPS        float64       // RATE_LIMIT_RPS, default 100; 0 turns limiting off
	RateLimitBurst      int           // RATE_LIMIT_BURST, default 200
}

// setting is one variable and its flag.
type setting struct {
	env, flag, def, usage string
}

var settings = []setting{
	{"ADDR", "addr", ":8080", "listen address"},
	{"DATABASE_URL", "database-url", "sqlite://data/riskapi.db", "sqlite://PATH or postgres://…"},
	{"JWT_SECRET", "jwt-secret", "", "HS256 key for session tokens (at least 32 bytes)"},
	{"IDEMPOTENCY_TTL", "idempotency-ttl", "24h", "how long an idempotency record is honoured"},
	{"IDEMPOTENCY_LEASE", "idempotency-lease", "1m", "how long a PROCESSING key may block others"},
	{"IDEMPOTENCY_REQUIRED", "idempotency-required", "false", "refuse writes without Idempotency-Key"},
	{"SWEEP_SCHEDULE", "sweep-schedule", "@every 10m", "robfig/cron spec of the idempotency sweep"},
	{"UPLOAD_DIR", "upload-dir", "data/uploads", "where attachment bytes live"},
	{"MAX_UPLOAD_BYTES", "max-upload-bytes", "1073741824", "largest accepted upload, bytes"},
	{"RATE_LIMIT_RPS", "rate-limit-rps", "100", "requests per second per credential; 0 turns it off"},
	{"RATE_LIMIT_BURST", "rate-limit-burst", "200", "burst per credential"},
}

// Register defines one string flag per setting on fs, defaulting to the environment
// variable (looked up with getenv) or the built-in default. Parse the flag set, then
// call Load with the returned values.
func Register(fs *flag.FlagSet, getenv func(string) string) map[string]*string {
	vals := make(map[string]*string, len(settings))
	for _, s := range settings {
		def := s.def
		if v := getenv(s.env); v != "" {
			def = v
		}
		vals[s.env] = fs.String(s.flag, def, s.usage+" ($"+s.env+")")
	}
	return vals
}

// Load validates the registered values. Errors name the variable and what is wrong
// with it, in one line.
func Load(vals map[string]*string) (Config, error) {
	get := func(env string) string { return *vals[env] }
	var c Config
	var err error
	c.Addr = get("ADDR")
	c.DatabaseURL = get("DATABASE_URL")
	c.JWTSecret = get("JWT_SECRET")
	c.SweepSchedule = get("SWEEP_SCHEDULE")
	c.UploadDir = get("UPLOAD_DIR")
	// Checked here, not when first used, so a bad value is a usage error (exit 2)
	// naming the variable rather than a failure deep inside startup.
	if _, port, err := net.SplitHostPort(c.Addr); err != nil || port == "" {
		return c, fmt.Errorf("ADDR must be host:port or :port, got %q", c.Addr)
	}
	switch u := c.DatabaseURL; {
	case strings.HasPrefix(u, "sqlite://"):
		if strings.TrimPrefix(u, "sqlite://") == "" {
			return c, fmt.Errorf("DATABASE_URL sqlite:// needs a file path, such as sqlite://data/riskapi.db")
		}
	case strings.HasPrefix(u, "postgres://"), strings.HasPrefix(u, "postgresql://"):
	default:
		return c, fmt.Errorf("DATABASE_URL must start with sqlite:// or postgres://")
	}
	if c.JWTSecret != "" && len(c.JWTSecret) < 32 {
		return c, fmt.Errorf("JWT_SECRET must be at least 32 bytes")
	}
	if c.IdempotencyTTL, err = positiveDuration("IDEMPOTENCY_TTL", get("IDEMPOTENCY_TTL")); err != nil {
		return c, err
	}
	if c.IdempotencyLease, err = positiveDuration("IDEMPOTENCY_LEASE", get("IDEMPOTENCY_LEASE")); err != nil {
		return c, err
	}
	if c.IdempotencyLease < 2*time.Second {
		return c, fmt.Errorf("IDEMPOTENCY_LEASE must be at least 2s, got %s", c.IdempotencyLease)
	}
	if c.IdempotencyRequired, err = strconv.ParseBool(get("IDEMPOTENCY_REQUIRED")); err != nil {
		return c, fmt.Errorf("IDEMPOTENCY_REQUIRED must be true or false, got %q", get("IDEMPOTENCY_REQUIRED"))
	}
	if _, err := cron.ParseStandard(c.SweepSchedule); err != nil {
		return c, fmt.Errorf("SWEEP_SCHEDULE is not a cron spec: %v", err)
	}
	if c.MaxUploadBytes, err = strconv.ParseInt(get("MAX_UPLOAD_BYTES"), 10, 64); err != nil || c.MaxUploadBytes <= 0 {
		return c, fmt.Errorf("MAX_UPLOAD_BYTES must be a positive number of bytes, got %q", get("MAX_UPLOAD_BYTES"))
	}
	if c.RateLimitRPS, err = strconv.ParseFloat(get("RATE_LIMIT_RPS"), 64); err != nil || c.RateLimitRPS < 0 {
		return c, fmt.Errorf("RATE_LIMIT_RPS must be a number ≥ 0, got %q", get("RATE_LIMIT_RPS"))
	}
	if c.RateLimitBurst, err = strconv.Atoi(get("RATE_LIMIT_BURST")); err != nil || c.RateLimitBurst < 0 {
		return c, fmt.Errorf("RATE_LIMIT_BURST must be an integer ≥ 0, got %q", get("RATE_LIMIT_BURST"))
	}
	return c, nil
}

func positiveDuration(name, v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s must be a positive duration such as 24h or 90s, got %q", name, v)
	}
	return d, nil
}
