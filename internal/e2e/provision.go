package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Credentials are a tenant and an API key with risks:read and risks:write.
type Credentials struct {
	TenantID string
	KeyID    string
	APIKey   string // rk_…
}

// CLI runs the api binary's administration command args against databaseURL (with
// dir as working directory) and returns its stdout. Errors carry stderr.
func CLI(ctx context.Context, bin, databaseURL, dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = environ(append([]string{"DATABASE_URL=" + databaseURL, secretKeyFor(databaseURL)}, poolerEnv(databaseURL)...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("api %s: %v; stderr: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// Provision creates a tenant named name and an API key for it through the binary's
// CLI (`api tenant create`, `api apikey create`), as an operator would.
func Provision(ctx context.Context, bin, databaseURL, dir, name string) (Credentials, error) {
	out, err := CLI(ctx, bin, databaseURL, dir, "tenant", "create", "--name", name)
	if err != nil {
		return Credentials{}, err
	}
	var t struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(out, &t); err != nil || !strings.HasPrefix(t.ID, "ten_") {
		return Credentials{}, fmt.Errorf("api tenant create printed %q", out)
	}
	out, err = CLI(ctx, bin, databaseURL, dir, "apikey", "create", "--tenant", t.ID,
		"--scopes", "risks:read,risks:write", "--name", name)
	if err != nil {
		return Credentials{}, err
	}
	var k struct {
		ID       string `json:"id"`
		TenantID string `json:"tenantId"`
		Key      string `json:"key"`
	}
	if err := json.Unmarshal(out, &k); err != nil || k.TenantID != t.ID || !strings.HasPrefix(k.Key, "rk_") {
		return Credentials{}, fmt.Errorf("api apikey create printed %q", out)
	}
	return Credentials{TenantID: t.ID, KeyID: k.ID, APIKey: k.Key}, nil
}

// ProvisionT is Provision for a test, with Binary(t) and a t.TempDir().
func ProvisionT(t testing.TB, databaseURL, name string) Credentials {
	t.Helper()
	c, err := Provision(context.Background(), Binary(t), databaseURL, t.TempDir(), name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Sweep runs `api sweep` once against databaseURL and returns how many records it
// deleted.
func Sweep(ctx context.Context, bin, databaseURL, dir string) (int, error) {
	out, err := CLI(ctx, bin, databaseURL, dir, "sweep")
	if err != nil {
		return 0, err
	}
	var r struct {
		Deleted *int `json:"deleted"`
	}
	if err := json.Unmarshal(out, &r); err != nil || r.Deleted == nil {
		return 0, fmt.Errorf("api sweep printed %q", out)
	}
	return *r.Deleted, nil
}

// TempDir makes a directory for an instance run outside a test; remove it when done.
func TempDir() (string, error) { return os.MkdirTemp("", "riskapi-e2e-") }
