package config_test

import (
	"flag"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/config"
)

func load(env map[string]string, args ...string) (config.Config, error) {
	return loadParts(env, nil, args...)
}

// loadParts loads the settings named (every one when names is nil) as a command
// that reads only those does.
func loadParts(env map[string]string, names []string, args ...string) (config.Config, error) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	vals := config.Register(fs, func(k string) string { return env[k] }, names...)
	if err := fs.Parse(args); err != nil {
		return config.Config{}, err
	}
	return config.Load(vals)
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	got, err := load(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := config.Config{
		HTTP: config.HTTP{Addr: ":8080", MaxJSONBytes: 1 << 20, IdleTimeout: 2 * time.Minute, HeaderTimeout: 10 * time.Second, MaxConnsPerClient: 256,
			BodyTimeout: 30 * time.Second, UploadMinRate: 10 << 10, UploadRateWindow: 10 * time.Second, TenantMaxInflight: 8, InstanceMaxCostly: config.AutoMaxCostly(), ShutdownGrace: 30 * time.Second, RequestLog: true},
		Database:    config.Database{URL: "sqlite://data/riskapi.db", MaxConns: 32, QueryTimeout: 10 * time.Second},
		Idempotency: config.Idempotency{TTL: 24 * time.Hour, Lease: time.Minute},
		Sweep:       config.Sweep{Schedule: "@every 10m", RequestLogTTL: 720 * time.Hour, EventTTL: 720 * time.Hour, AuditLogTTL: 8760 * time.Hour}, Uploads: config.Uploads{Dir: "data/uploads", MaxBytes: 1 << 30, MaxImportRows: 100000, ImportTimeout: 5 * time.Minute},
		Due:       config.Due{Schedule: "@every 1m", ReviewDueDays: 7},
		RateLimit: config.RateLimit{RPS: 100, Burst: 200, RedisPrefix: "riskapi:"}, Outbound: config.Outbound{RetryFor: 72 * time.Hour, EndpointsMax: 16, EndpointConcurrency: 2, AutoDisableAfter: 72 * time.Hour},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults of README.md's configuration table (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, config.Default()); diff != "" {
		t.Errorf("Default() (-want +got):\n%s", diff)
	}
}

func TestEnvironmentAndFlags(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"ADDR": "127.0.0.1:9000", "DATABASE_URL": "postgres://db/x", "DATABASE_MAX_CONNS": "8", "DATABASE_READ_URL": "postgres://replica/x", "JWT_SECRET": strings.Repeat("s", 32),
		"IDEMPOTENCY_TTL": "1h", "IDEMPOTENCY_LEASE": "30s", "IDEMPOTENCY_REQUIRED": "true",
		"SWEEP_SCHEDULE": "@hourly", "UPLOAD_DIR": "/tmp/u", "MAX_UPLOAD_BYTES": "1024",
		"RATE_LIMIT_RPS": "0", "RATE_LIMIT_BURST": "0", "HTTP_IDLE_TIMEOUT": "45s", "REQUEST_LOG_TTL": "48h", "REQUEST_LOG": "off",
		"TRUSTED_PROXIES": "10.0.0.0/8, 2001:db8::/32", "REDIS_URL": "redis://127.0.0.1:6379/3",
		"EVENT_TTL": "48h", "WEBHOOK_RETRY_FOR": "1h", "WEBHOOK_ALLOW_PRIVATE": "true", "AUDIT_LOG_TTL": "2160h", "WEBHOOK_ENDPOINTS_MAX": "3",
		"WEBHOOK_ENDPOINT_CONCURRENCY": "4", "MAX_CONNS_PER_CLIENT": "0", "SECRET_KEY": strings.Repeat("k", 32), "TENANT_MAX_INFLIGHT": "3", "INSTANCE_MAX_COSTLY": "5", "QUERY_TIMEOUT": "2s",
		"SCHEDULE_SPEC": "@every 1s", "REVIEW_DUE_DAYS": "3",
	}
	got, err := load(env)
	if err != nil {
		t.Fatal(err)
	}
	def := config.Default().HTTP
	_, ten, _ := net.ParseCIDR("10.0.0.0/8")
	_, doc, _ := net.ParseCIDR("2001:db8::/32")
	want := config.Config{HTTP: config.HTTP{Addr: "127.0.0.1:9000", MaxJSONBytes: 1 << 20, IdleTimeout: 45 * time.Second,
		TrustedProxies: []*net.IPNet{ten, doc}, HeaderTimeout: def.HeaderTimeout, BodyTimeout: def.BodyTimeout,
		UploadMinRate: def.UploadMinRate, UploadRateWindow: def.UploadRateWindow, TenantMaxInflight: 3, InstanceMaxCostly: 5, ShutdownGrace: def.ShutdownGrace},
		RateLimit: config.RateLimit{RedisURL: "redis://127.0.0.1:6379/3", RedisPrefix: "riskapi:"},
		Database:  config.Database{URL: "postgres://db/x", SecretKey: strings.Repeat("k", 32), MaxConns: 8, ReadURL: "postgres://replica/x", QueryTimeout: 2 * time.Second}, Auth: config.Auth{JWTSecret: strings.Repeat("s", 32)},
		Idempotency: config.Idempotency{TTL: time.Hour, Lease: 30 * time.Second, Required: true},
		Sweep: config.Sweep{Schedule: "@hourly", RequestLogTTL: 48 * time.Hour, EventTTL: 48 * time.Hour,
			AuditLogTTL: 2160 * time.Hour}, Due: config.Due{Schedule: "@every 1s", ReviewDueDays: 3}, Uploads: config.Uploads{Dir: "/tmp/u", MaxBytes: 1024, MaxImportRows: 100000, ImportTimeout: 5 * time.Minute},
		Outbound: config.Outbound{RetryFor: time.Hour, AllowPrivate: true, EndpointsMax: 3, EndpointConcurrency: 4, AutoDisableAfter: 72 * time.Hour}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("from the environment (-want +got):\n%s", diff)
	}

	// A flag of the same name overrides the variable.
	got, err = load(env, "--addr", ":1", "--idempotency-ttl=2h", "--rate-limit-rps", "1.5", "--idempotency-required=false")
	if err != nil {
		t.Fatal(err)
	}
	want.HTTP.Addr, want.Idempotency.TTL, want.RateLimit.RPS, want.Idempotency.Required = ":1", 2*time.Hour, 1.5, false
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flags over the environment (-want +got):\n%s", diff)
	}
}

func TestBadValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, variable, value string
	}{
		{"address without port", "ADDR", "localhost"},
		{"address with a path", "ADDR", "http://localhost:8080/"},
		{"mysql", "DATABASE_URL", "mysql://db/x"},
		{"bare path", "DATABASE_URL", "data/riskapi.db"},
		{"sqlite without path", "DATABASE_URL", "sqlite://"},
		{"no connections", "DATABASE_MAX_CONNS", "0"},
		{"connections not a number", "DATABASE_MAX_CONNS", "many"},
		{"read URL not postgres", "DATABASE_READ_URL", "sqlite://data/replica.db"},
		{"short secret", "JWT_SECRET", "short"},
		{"ttl not a duration", "IDEMPOTENCY_TTL", "a day"},
		{"ttl zero", "IDEMPOTENCY_TTL", "0s"},
		{"ttl negative", "IDEMPOTENCY_TTL", "-1h"},
		{"lease too short", "IDEMPOTENCY_LEASE", "1s"},
		{"lease not a duration", "IDEMPOTENCY_LEASE", "1"},
		{"required not a bool", "IDEMPOTENCY_REQUIRED", "maybe"},
		{"schedule", "SWEEP_SCHEDULE", "every ten minutes"},
		{"due schedule", "SCHEDULE_SPEC", "every minute"},
		{"review due days", "REVIEW_DUE_DAYS", "-1"},
		{"request log neither on nor off", "REQUEST_LOG", "false"},
		{"request log ttl zero", "REQUEST_LOG_TTL", "0s"},
		{"request log ttl not a duration", "REQUEST_LOG_TTL", "30 days"},
		{"upload bytes", "MAX_UPLOAD_BYTES", "1GB"},
		{"upload bytes zero", "MAX_UPLOAD_BYTES", "0"},
		{"rps negative", "RATE_LIMIT_RPS", "-1"},
		{"rps not a number", "RATE_LIMIT_RPS", "fast"},
		{"burst negative", "RATE_LIMIT_BURST", "-1"},
		{"burst fraction", "RATE_LIMIT_BURST", "1.5"},
		{"idle timeout", "HTTP_IDLE_TIMEOUT", "forever"},
		{"inflight negative", "TENANT_MAX_INFLIGHT", "-1"},
		{"inflight not a number", "TENANT_MAX_INFLIGHT", "lots"},
		{"instance costly negative", "INSTANCE_MAX_COSTLY", "-1"},
		{"instance costly not a number", "INSTANCE_MAX_COSTLY", "half"},
		{"query timeout zero", "QUERY_TIMEOUT", "0s"},
		{"query timeout too short", "QUERY_TIMEOUT", "1ms"},
		{"proxy not a CIDR", "TRUSTED_PROXIES", "10.0.0.1"},
		{"proxies garbled", "TRUSTED_PROXIES", "10.0.0.0/8,proxy.internal"},
		{"redis scheme", "REDIS_URL", "http://127.0.0.1:6379"},
		{"event ttl zero", "EVENT_TTL", "0s"},
		{"audit log ttl not a duration", "AUDIT_LOG_TTL", "1 year"},
		{"retry window not a duration", "WEBHOOK_RETRY_FOR", "3 days"},
		{"allow private not a bool", "WEBHOOK_ALLOW_PRIVATE", "yes please"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(map[string]string{tt.variable: tt.value})
			if err == nil {
				t.Fatalf("%s=%q accepted", tt.variable, tt.value)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.variable) || strings.Contains(msg, "\n") {
				t.Errorf("error %q should be one line naming %s", msg, tt.variable)
			}
		})
	}
}

// TestCommandsLoadOnlyWhatTheyRead: a variable a command does not read cannot stop
// it and does not reach it; its flag is unknown to that command; a setting it reads
// is checked.
func TestCommandsLoadOnlyWhatTheyRead(t *testing.T) {
	t.Parallel()
	env := map[string]string{"ADDR": "localhost", "IDEMPOTENCY_TTL": "forever", "DATABASE_URL": "postgres://db/x"}
	got, err := loadParts(env, []string{"DATABASE_URL"})
	if err != nil {
		t.Fatalf("a bad ADDR stopped a database-only command: %v", err)
	}
	want := config.Default()
	want.Database.URL = "postgres://db/x"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DATABASE_URL only (-want +got):\n%s", diff)
	}
	if _, err := loadParts(nil, []string{"DATABASE_URL"}, "--idempotency-ttl", "1h"); err == nil ||
		!strings.Contains(err.Error(), "idempotency-ttl") {
		t.Errorf("another command's flag: err = %v, want flag provided but not defined", err)
	}
	if _, err := loadParts(env, []string{"DATABASE_URL", "ADDR"}); err == nil || !strings.Contains(err.Error(), "ADDR") {
		t.Errorf("ADDR read with a bad value: err = %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a setting that does not exist did not panic")
		}
	}()
	loadParts(nil, []string{"NO_SUCH_SETTING"})
}

// TestLeases: every lease-bound timeout fits inside the lease, with the margins
// docs/idempotency.md relies on, at the smallest lease allowed and the default.
func TestLeases(t *testing.T) {
	t.Parallel()
	for _, lease := range []time.Duration{2 * time.Second, time.Minute, 2 * time.Hour} {
		l := config.Idempotency{Lease: lease}.Leases()
		if l.Handler >= lease || l.Store >= l.Handler || l.IdleInTx != lease || l.OrphanGrace < 2*lease || l.OrphanGrace < time.Hour {
			t.Errorf("lease %s: %+v", lease, l)
		}
	}
}

// TestHelpAndErrorsNameTheFlag: help shows each setting's kind (bool, duration,
// number) where flag would say "string", and a bad value's error names the flag
// beside the variable, since either may have carried it.
func TestHelpAndErrorsNameTheFlag(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	var help strings.Builder
	fs.SetOutput(&help)
	config.Register(fs, func(string) string { return "" })
	fs.PrintDefaults()
	for _, want := range []string{"--idempotency-ttl duration", "--require-if-match bool", "--database-max-conns number", "--addr string"} {
		if !strings.Contains(strings.ReplaceAll(help.String(), "  -", "  --"), want) {
			t.Errorf("help lacks %q:\n%s", want, help.String())
		}
	}
	_, err := load(nil, "-idempotency-ttl", "soon")
	if err == nil || !strings.Contains(err.Error(), "IDEMPOTENCY_TTL (--idempotency-ttl)") {
		t.Errorf("error %v, want it to name IDEMPOTENCY_TTL (--idempotency-ttl)", err)
	}
}
