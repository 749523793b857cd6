package config

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// setting is one variable: its flag, default, usage, and set, which checks a value
// and stores it in a Config (its error names the variable and what is wrong, in one
// line).
type setting struct {
	env, flag, def, usage string
	set                   func(c *Config, v string) error
}

// settings are every variable riskapi reads. A new one is one row here and one field
// in its component's struct.
var settings = []setting{
	{"ADDR", "addr", ":8080", "listen address", func(c *Config, v string) error {
		if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
			return fmt.Errorf("ADDR must be host:port or :port, got %q", v)
		}
		c.HTTP.Addr = v
		return nil
	}},
	{"REQUIRE_IF_MATCH", "require-if-match", "false", "refuse writes of a risk (PATCH, PUT, DELETE), an action or a webhook endpoint (PATCH) without If-Match (428)", func(c *Config, v string) (err error) {
		if c.HTTP.RequireIfMatch, err = strconv.ParseBool(v); err != nil {
			return fmt.Errorf("REQUIRE_IF_MATCH must be true or false, got %q", v)
		}
		return nil
	}},
	{"DATABASE_URL", "database-url", "sqlite://data/riskapi.db", "sqlite://PATH or postgres://…", func(c *Config, v string) error {
		switch {
		case strings.HasPrefix(v, "sqlite://"):
			if strings.TrimPrefix(v, "sqlite://") == "" {
				return fmt.Errorf("DATABASE_URL sqlite:// needs a file path, such as sqlite://data/riskapi.db")
			}
		case strings.HasPrefix(v, "postgres://"), strings.HasPrefix(v, "postgresql://"):
		default:
			return fmt.Errorf("DATABASE_URL must start with sqlite:// or postgres://")
		}
		c.Database.URL = v
		return nil
	}},
	{"SECRET_KEY", "secret-key", "", "seals stored secrets and keys idempotency fingerprints (at least 32 bytes; default: a random key in the data directory's secret.key)", func(c *Config, v string) error {
		if v != "" && len(v) < 32 {
			return fmt.Errorf("SECRET_KEY must be at least 32 bytes")
		}
		c.Database.SecretKey = v
		return nil
	}},
	{"DATABASE_MAX_CONNS", "database-max-conns", "32", "most PostgreSQL connections per instance", func(c *Config, v string) (err error) {
		if c.Database.MaxConns, err = strconv.Atoi(v); err != nil || c.Database.MaxConns < 1 {
			return fmt.Errorf("DATABASE_MAX_CONNS must be a whole number ≥ 1, got %q", v)
		}
		return nil
	}},
	{"DATABASE_READ_URL", "database-read-url", "", "postgres://… of a replica the lists read from (may lag)", func(c *Config, v string) error {
		if v != "" && !strings.HasPrefix(v, "postgres://") && !strings.HasPrefix(v, "postgresql://") {
			return fmt.Errorf("DATABASE_READ_URL must start with postgres://")
		}
		c.Database.ReadURL = v
		return nil
	}},
	{"DATABASE_POOLER", "database-pooler", "", "transaction when DATABASE_URL points at a transaction-mode pooler (PgBouncer)", func(c *Config, v string) error {
		if v != "" && v != "transaction" {
			return fmt.Errorf("DATABASE_POOLER must be unset or transaction, got %q", v)
		}
		c.Database.Pooler = v
		return nil
	}},
	{"JWT_SECRET", "jwt-secret", "", "HS256 key for session tokens (at least 32 bytes)", func(c *Config, v string) error {
		if v != "" && len(v) < 32 {
			return fmt.Errorf("JWT_SECRET must be at least 32 bytes")
		}
		c.Auth.JWTSecret = v
		return nil
	}},
	{"IDEMPOTENCY_TTL", "idempotency-ttl", "24h", "how long an idempotency record is honoured",
		duration("IDEMPOTENCY_TTL", time.Nanosecond, func(c *Config) *time.Duration { return &c.Idempotency.TTL })},
	{"IDEMPOTENCY_LEASE", "idempotency-lease", "1m", "how long a PROCESSING key may block others",
		duration("IDEMPOTENCY_LEASE", 2*time.Second, func(c *Config) *time.Duration { return &c.Idempotency.Lease })},
	{"IDEMPOTENCY_REQUIRED", "idempotency-required", "false", "refuse writes without Idempotency-Key", func(c *Config, v string) (err error) {
		if c.Idempotency.Required, err = strconv.ParseBool(v); err != nil {
			return fmt.Errorf("IDEMPOTENCY_REQUIRED must be true or false, got %q", v)
		}
		return nil
	}},
	{"SWEEP_SCHEDULE", "sweep-schedule", "@every 10m", "robfig/cron spec of the sweep (what api sweep deletes)", func(c *Config, v string) error {
		if _, err := cron.ParseStandard(v); err != nil {
			return fmt.Errorf("SWEEP_SCHEDULE is not a cron spec: %v", err)
		}
		c.Sweep.Schedule = v
		return nil
	}},
	{"SCHEDULE_SPEC", "schedule-spec", "@every 1m", "robfig/cron spec of the due-date finder (docs/register.md)", func(c *Config, v string) error {
		if _, err := cron.ParseStandard(v); err != nil {
			return fmt.Errorf("SCHEDULE_SPEC is not a cron spec: %v", err)
		}
		c.Due.Schedule = v
		return nil
	}},
	{"REVIEW_DUE_DAYS", "review-due-days", "7", "days before reviewDate that risk.review_due is emitted", func(c *Config, v string) (err error) {
		if c.Due.ReviewDueDays, err = strconv.Atoi(v); err != nil || c.Due.ReviewDueDays < 0 || c.Due.ReviewDueDays > 365 {
			return fmt.Errorf("REVIEW_DUE_DAYS must be a whole number of days from 0 to 365, got %q", v)
		}
		return nil
	}},
	{"REQUEST_LOG", "request-log", "on", "on or off: log each authenticated request (docs/requests.md)", func(c *Config, v string) error {
		switch v {
		case "on", "off":
			c.HTTP.RequestLog = v == "on"
			return nil
		}
		return fmt.Errorf("REQUEST_LOG must be on or off, got %q", v)
	}},
	{"REQUEST_LOG_TTL", "request-log-ttl", "720h", "how long request-log entries are kept",
		duration("REQUEST_LOG_TTL", time.Nanosecond, func(c *Config) *time.Duration { return &c.Sweep.RequestLogTTL })},
	{"UPLOAD_DIR", "upload-dir", "data/uploads", "where attachment bytes live", func(c *Config, v string) error {
		c.Uploads.Dir = v
		return nil
	}},
	{"MAX_UPLOAD_BYTES", "max-upload-bytes", "1073741824", "largest accepted upload, bytes", func(c *Config, v string) (err error) {
		if c.Uploads.MaxBytes, err = strconv.ParseInt(v, 10, 64); err != nil || c.Uploads.MaxBytes <= 0 {
			return fmt.Errorf("MAX_UPLOAD_BYTES must be a positive number of bytes, got %q", v)
		}
		return nil
	}},
	{"MAX_IMPORT_ROWS", "max-import-rows", "100000", "most rows of one CSV import of risks", func(c *Config, v string) (err error) {
		if c.Uploads.MaxImportRows, err = strconv.Atoi(v); err != nil || c.Uploads.MaxImportRows <= 0 {
			return fmt.Errorf("MAX_IMPORT_ROWS must be a positive number of rows, got %q", v)
		}
		return nil
	}},
	{"IMPORT_TIMEOUT", "import-timeout", "5m", "bound of a CSV import's transaction and statements",
		duration("IMPORT_TIMEOUT", time.Second, func(c *Config) *time.Duration { return &c.Uploads.ImportTimeout })},
	{"TENANT_MAX_INFLIGHT", "tenant-max-inflight", "8", "costly reads one tenant may have in flight per instance (429 beyond); 0 turns it off", func(c *Config, v string) (err error) {
		if c.HTTP.TenantMaxInflight, err = strconv.Atoi(v); err != nil || c.HTTP.TenantMaxInflight < 0 {
			return fmt.Errorf("TENANT_MAX_INFLIGHT must be a whole number ≥ 0, got %q", v)
		}
		return nil
	}},
	{"INSTANCE_MAX_COSTLY", "instance-max-costly", "auto", "costly reads of all tenants run at once per instance, shared fairly (others wait their turn); auto: half the CPUs, at least 1; 0 turns it off", func(c *Config, v string) (err error) {
		if v == "auto" {
			c.HTTP.InstanceMaxCostly = AutoMaxCostly()
			return nil
		}
		if c.HTTP.InstanceMaxCostly, err = strconv.Atoi(v); err != nil || c.HTTP.InstanceMaxCostly < 0 {
			return fmt.Errorf("INSTANCE_MAX_COSTLY must be auto or a whole number ≥ 0, got %q", v)
		}
		return nil
	}},
	{"QUERY_TIMEOUT", "query-timeout", "10s", "bound of each store call of a read (503 QUERY_TIMEOUT past it)",
		duration("QUERY_TIMEOUT", 10*time.Millisecond, func(c *Config) *time.Duration { return &c.Database.QueryTimeout })},
	{"RATE_LIMIT_RPS", "rate-limit-rps", "100", "requests per second per credential; 0 turns it off", func(c *Config, v string) (err error) {
		if c.RateLimit.RPS, err = strconv.ParseFloat(v, 64); err != nil || c.RateLimit.RPS < 0 {
			return fmt.Errorf("RATE_LIMIT_RPS must be a number ≥ 0, got %q", v)
		}
		return nil
	}},
	{"MAX_CONNS_PER_CLIENT", "max-conns-per-client", "256", "open connections per client address (an IPv4 address, an IPv6 /64); 0 turns the cap off",
		func(c *Config, v string) (err error) {
			if c.HTTP.MaxConnsPerClient, err = strconv.Atoi(v); err != nil || c.HTTP.MaxConnsPerClient < 0 {
				return fmt.Errorf("MAX_CONNS_PER_CLIENT must be a whole number ≥ 0, got %q", v)
			}
			return nil
		}},
	{"HTTP_IDLE_TIMEOUT", "http-idle-timeout", "2m", "close keep-alive connections idle this long",
		duration("HTTP_IDLE_TIMEOUT", time.Second, func(c *Config) *time.Duration { return &c.HTTP.IdleTimeout })},
	{"TRUSTED_PROXIES", "trusted-proxies", "", "comma-separated CIDRs whose X-Forwarded-For is believed", func(c *Config, v string) error {
		c.HTTP.TrustedProxies = nil
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			_, n, err := net.ParseCIDR(s)
			if err != nil {
				return fmt.Errorf("TRUSTED_PROXIES must be comma-separated CIDRs such as 10.0.0.0/8, got %q", s)
			}
			c.HTTP.TrustedProxies = append(c.HTTP.TrustedProxies, n)
		}
		return nil
	}},
	{"REDIS_URL", "redis-url", "", "redis://… to share rate limits between instances", func(c *Config, v string) error {
		if v != "" && !strings.HasPrefix(v, "redis://") && !strings.HasPrefix(v, "rediss://") {
			return fmt.Errorf("REDIS_URL must start with redis:// or rediss://")
		}
		c.RateLimit.RedisURL = v
		return nil
	}},
	{"RATE_LIMIT_BURST", "rate-limit-burst", "200", "burst per credential", func(c *Config, v string) (err error) {
		if c.RateLimit.Burst, err = strconv.Atoi(v); err != nil || c.RateLimit.Burst < 0 {
			return fmt.Errorf("RATE_LIMIT_BURST must be an integer ≥ 0, got %q", v)
		}
		return nil
	}},
	{"TEST_RATE_LIMIT_RPS", "test-rate-limit-rps", "", "requests per second per credential in test mode (docs/sandboxes.md); unset: half of RATE_LIMIT_RPS", func(c *Config, v string) error {
		if v == "" {
			c.RateLimit.TestRPS = nil
			return nil
		}
		rps, err := strconv.ParseFloat(v, 64)
		if err != nil || rps < 0 {
			return fmt.Errorf("TEST_RATE_LIMIT_RPS must be a number ≥ 0, got %q", v)
		}
		c.RateLimit.TestRPS = &rps
		return nil
	}},
	{"TEST_RATE_LIMIT_BURST", "test-rate-limit-burst", "", "burst per credential in test mode; unset: half of RATE_LIMIT_BURST", func(c *Config, v string) error {
		if v == "" {
			c.RateLimit.TestBurst = nil
			return nil
		}
		burst, err := strconv.Atoi(v)
		if err != nil || burst < 0 {
			return fmt.Errorf("TEST_RATE_LIMIT_BURST must be an integer ≥ 0, got %q", v)
		}
		c.RateLimit.TestBurst = &burst
		return nil
	}},
	{"EVENT_TTL", "event-ttl", "720h", "how long events are kept and listable",
		duration("EVENT_TTL", time.Second, func(c *Config) *time.Duration { return &c.Sweep.EventTTL })},
	{"AUDIT_LOG_TTL", "audit-log-ttl", "8760h", "how long audit-log entries are kept",
		duration("AUDIT_LOG_TTL", time.Second, func(c *Config) *time.Duration { return &c.Sweep.AuditLogTTL })},
	{"OTEL_EXPORTER_OTLP_ENDPOINT", "otel-exporter-otlp-endpoint", "", "http(s)://… of an OTLP/HTTP collector to send traces to (unset: no tracing)", func(c *Config, v string) error {
		if v != "" {
			if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL")
			}
		}
		c.Tracing.Endpoint = v
		return nil
	}},
	{"WEBHOOK_RETRY_FOR", "webhook-retry-for", "72h", "how long a failing webhook delivery is retried",
		duration("WEBHOOK_RETRY_FOR", time.Second, func(c *Config) *time.Duration { return &c.Outbound.RetryFor })},
	{"WEBHOOK_AUTO_DISABLE_AFTER", "webhook-auto-disable-after", "72h", "how long every delivery to a webhook endpoint may fail before it is disabled",
		duration("WEBHOOK_AUTO_DISABLE_AFTER", 0, func(c *Config) *time.Duration { return &c.Outbound.AutoDisableAfter })},
	{"WEBHOOK_ENDPOINTS_MAX", "webhook-endpoints-max", "16", "outbound webhook endpoints per tenant",
		func(c *Config, v string) (err error) {
			if c.Outbound.EndpointsMax, err = strconv.Atoi(v); err != nil || c.Outbound.EndpointsMax < 1 {
				return fmt.Errorf("WEBHOOK_ENDPOINTS_MAX must be a whole number of at least 1, got %q", v)
			}
			return nil
		}},
	{"WEBHOOK_ENDPOINT_CONCURRENCY", "webhook-endpoint-concurrency", "2", "outbound deliveries in flight per endpoint, per instance",
		func(c *Config, v string) (err error) {
			if c.Outbound.EndpointConcurrency, err = strconv.Atoi(v); err != nil || c.Outbound.EndpointConcurrency < 1 {
				return fmt.Errorf("WEBHOOK_ENDPOINT_CONCURRENCY must be a whole number of at least 1, got %q", v)
			}
			return nil
		}},
	{"WEBHOOK_ALLOW_PRIVATE", "webhook-allow-private", "false", "allow webhook endpoints on loopback or private addresses",
		func(c *Config, v string) (err error) {
			if c.Outbound.AllowPrivate, err = strconv.ParseBool(v); err != nil {
				return fmt.Errorf("WEBHOOK_ALLOW_PRIVATE must be true or false, got %q", v)
			}
			return nil
		}},
}

// duration is the setter of a duration variable name of at least min.
func duration(name string, min time.Duration, field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("%s must be a positive duration such as 24h or 90s, got %q", name, v)
		}
		if d < min {
			return fmt.Errorf("%s must be at least %s, got %s", name, min, d)
		}
		*field(c) = d
		return nil
	}
}

// Default returns the configuration with every variable at its default.
func Default() Config {
	c := Config{
		HTTP: HTTP{MaxJSONBytes: 1 << 20, HeaderTimeout: 10 * time.Second, BodyTimeout: 30 * time.Second,
			UploadMinRate: 10 << 10, UploadRateWindow: 10 * time.Second, ShutdownGrace: 30 * time.Second},
		RateLimit: RateLimit{RedisPrefix: "riskapi:"},
	}
	for _, s := range settings {
		if err := s.set(&c, s.def); err != nil {
			panic("config: the default of " + s.env + " is invalid: " + err.Error())
		}
	}
	return c
}

// Values are one command line's settings as registered on its flag set.
type Values struct {
	vals map[string]*string // by variable
}

// Register defines one string flag on fs for each setting named (by its variable,
// such as "DATABASE_URL"; every setting when none are named), defaulting to the
// environment variable (looked up with getenv) or the built-in default. A command
// registers exactly the settings it reads, so its flag set, its help and what it
// loads are the same list; any other setting's flag is an unknown flag to it. Parse
// the flag set, then call Load. It panics on a name no setting has: the command
// table is wrong.
// kindOf names the kind of value a default is, for help: bool, duration or number;
// "" for text.
func kindOf(def string) string {
	if _, err := strconv.ParseBool(def); err == nil {
		return "bool"
	}
	if _, err := time.ParseDuration(def); err == nil && def != "0" {
		return "duration"
	}
	if _, err := strconv.ParseFloat(def, 64); err == nil {
		return "number"
	}
	return ""
}

func Register(fs *flag.FlagSet, getenv func(string) string, names ...string) *Values {
	v := &Values{vals: make(map[string]*string, len(settings))}
	for _, name := range names {
		if !slices.ContainsFunc(settings, func(s setting) bool { return s.env == name }) {
			panic("config: no setting " + name)
		}
	}
	for _, s := range settings {
		if len(names) > 0 && !slices.Contains(names, s.env) {
			continue
		}
		def := s.def
		if e := getenv(s.env); e != "" {
			def = e
		}
		// The usage names the built-in default, never def: help must not print a value
		// from the environment (DATABASE_URL may hold a password).
		// A backquoted kind is what flag's help shows as the type (flag.UnquoteUsage).
		kind := ""
		if k := kindOf(s.def); k != "" {
			kind = "a `" + k + "`, "
		}
		v.vals[s.env] = fs.String(s.flag, def, s.usage+" ("+kind+"env "+s.env+", default "+strconv.Quote(s.def)+")")
	}
	return v
}

// Load checks the registered settings' values (from the command line, else the
// environment, else the default) and returns the configuration; every setting not
// registered keeps its default, whatever the environment says, so a variable meant
// for another command (a bad ADDR for `api migrate`) cannot stop this one. Errors
// name the variable and what is wrong with it, in one line.
func Load(v *Values) (Config, error) {
	c := Default()
	for _, s := range settings {
		val, ok := v.vals[s.env]
		if !ok {
			continue
		}
		if err := s.set(&c, *val); err != nil {
			// Name the flag beside the variable: the value may have come from either.
			return c, errors.New(strings.Replace(err.Error(), s.env, s.env+" (--"+s.flag+")", 1))
		}
	}
	return c, nil
}

// AutoMaxCostly is INSTANCE_MAX_COSTLY's default: half the CPUs Go may use, at
// least 1, so that costly reads at their most leave the other half to every other
// request (docs/performance.md, "A fair share of capacity").
func AutoMaxCostly() int { return max(1, runtime.GOMAXPROCS(0)/2) }
