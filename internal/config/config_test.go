package config_test

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/config"
)

func load(env map[string]string, args ...string) (config.Config, error) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	vals := config.Register(fs, func(k string) string { return env[k] })
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
		Addr: ":8080", DatabaseURL: "sqlite://data/riskapi.db", IdempotencyTTL: 24 * time.Hour,
		IdempotencyLease: time.Minute, SweepSchedule: "@every 10m", UploadDir: "data/uploads",
		MaxUploadBytes: 1 << 30, RateLimitRPS: 100, RateLimitBurst: 200,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults of api-contract.md section 1 (-want +got):\n%s", diff)
	}
}

func TestEnvironmentAndFlags(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"ADDR": "127.0.0.1:9000", "DATABASE_URL": "postgres://db/x", "JWT_SECRET": strings.Repeat("s", 32),
		"IDEMPOTENCY_TTL": "1h", "IDEMPOTENCY_LEASE": "30s", "IDEMPOTENCY_REQUIRED": "true",
		"SWEEP_SCHEDULE": "@hourly", "UPLOAD_DIR": "/tmp/u", "MAX_UPLOAD_BYTES": "1024",
		"RATE_LIMIT_RPS": "0", "RATE_LIMIT_BURST": "0",
	}
	got, err := load(env)
	if err != nil {
		t.Fatal(err)
	}
	want := config.Config{Addr: "127.0.0.1:9000", DatabaseURL: "postgres://db/x", JWTSecret: strings.Repeat("s", 32),
		IdempotencyTTL: time.Hour, IdempotencyLease: 30 * time.Second, IdempotencyRequired: true,
		SweepSchedule: "@hourly", UploadDir: "/tmp/u", MaxUploadBytes: 1024}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("from the environment (-want +got):\n%s", diff)
	}

	// A flag of the same name overrides the variable.
	got, err = load(env, "--addr", ":1", "--idempotency-ttl=2h", "--rate-limit-rps", "1.5", "--idempotency-required=false")
	if err != nil {
		t.Fatal(err)
	}
	want.Addr, want.IdempotencyTTL, want.RateLimitRPS, want.IdempotencyRequired = ":1", 2*time.Hour, 1.5, false
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
		{"short secret", "JWT_SECRET", "short"},
		{"ttl not a duration", "IDEMPOTENCY_TTL", "a day"},
		{"ttl zero", "IDEMPOTENCY_TTL", "0s"},
		{"ttl negative", "IDEMPOTENCY_TTL", "-1h"},
		{"lease too short", "IDEMPOTENCY_LEASE", "1s"},
		{"lease not a duration", "IDEMPOTENCY_LEASE", "1"},
		{"required not a bool", "IDEMPOTENCY_REQUIRED", "maybe"},
		{"schedule", "SWEEP_SCHEDULE", "every ten minutes"},
		{"upload bytes", "MAX_UPLOAD_BYTES", "1GB"},
		{"upload bytes zero", "MAX_UPLOAD_BYTES", "0"},
		{"rps negative", "RATE_LIMIT_RPS", "-1"},
		{"rps not a number", "RATE_LIMIT_RPS", "fast"},
		{"burst negative", "RATE_LIMIT_BURST", "-1"},
		{"burst fraction", "RATE_LIMIT_BURST", "1.5"},
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
