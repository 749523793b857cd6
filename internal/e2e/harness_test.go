package e2e_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/e2e"
)

// TestHarness checks the harness itself: provisioning through the CLI, start, a
// keyed write, SIGKILL and restart on the same port and on a new one, and a graceful
// stop.
func TestHarness(t *testing.T) {
	url := dbtest.URL(t)
	creds := e2e.ProvisionT(t, url, "harness")
	in := e2e.StartT(t, e2e.Config{DatabaseURL: url, Name: "api"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := e2e.NewClient(creds.APIKey, 2)
	defer c.Close()

	first := c.CreateRisk(ctx, in.URL(), "harness-key-1", []byte(`{"title":"harness"}`))
	if first.Status != http.StatusCreated || first.Replayed != "false" {
		t.Fatalf("create: %s", first)
	}
	old := in.URL()
	if err := in.Kill(); err != nil {
		t.Fatal(err)
	}
	if in.Running() {
		t.Fatal("running after Kill")
	}
	if a := c.Do(ctx, http.MethodGet, old, "/readyz", "", nil); a.Err == nil {
		t.Fatalf("a killed instance answered: %s", a)
	}
	if err := in.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if in.URL() != old {
		t.Logf("restarted on %s instead of %s (port taken meanwhile)", in.URL(), old)
	}
	again := c.CreateRisk(ctx, in.URL(), "harness-key-1", []byte(`{"title":"harness"}`))
	if again.Status != http.StatusCreated || again.Replayed != "true" || string(again.Body) != string(first.Body) {
		t.Fatalf("replay after restart: %s", again)
	}
	if err := in.RestartNewPort(ctx); err != nil {
		t.Fatal(err)
	}
	if in.URL() == old {
		t.Errorf("RestartNewPort kept %s", old)
	}
	risks, err := c.ListRisks(ctx, in.URL(), 10)
	if err != nil || len(risks) != 1 {
		t.Fatalf("list: %v %v", risks, err)
	}
	if in.Starts() != 3 {
		t.Errorf("Starts() = %d, want 3", in.Starts())
	}
	if err := in.Stop(); err != nil {
		t.Fatalf("graceful stop: %v\n%s", err, in.LogTail(4096))
	}
	if !strings.Contains(in.Logs(), "shutting down") {
		t.Errorf("no graceful shutdown in the log:\n%s", in.LogTail(4096))
	}
	if n, err := e2e.Sweep(ctx, e2e.Binary(t), url, t.TempDir()); err != nil || n != 0 {
		t.Errorf("api sweep: %d, %v", n, err)
	}
}
