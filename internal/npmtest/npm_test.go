// Package npmtest runs the tests of the npm workspaces (sdk-ts: the TypeScript
// SDK; web: the dashboard) from `go test ./...`, so that the README's one test
// command runs everything. It has no non-test code.
package npmtest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// budget leaves go test's default 10-minute timeout room to report a hang.
const budget = 9 * time.Minute

// TestNPM runs `npm test` at the repository root: the SDK's unit and
// integration tests (against the real server on the store TEST_DATABASE_URL
// selects) and the dashboard's tests, including its end-to-end tests in
// Chromium. Without installed node_modules it is skipped, except under CI
// (CI=true), where a missing or stale install fails: .ci/run runs `npm ci`.
func TestNPM(t *testing.T) {
	root := repoRoot(t)
	ci := os.Getenv("CI") == "true"
	if reason := notReady(root); reason != "" {
		if ci {
			t.Fatalf("%s (run `npm ci` at the repository root)", reason)
		}
		t.Skipf("%s: run `npm ci` at the repository root to include the TypeScript tests", reason)
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "test")
	cmd.Dir = root
	// Plain text in go test's log.
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
	// npm starts vitest, which starts servers and browsers: on timeout, end
	// the whole process group this test started, not only npm.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("npm test did not finish within %v:\n%s", budget, tail(out.String(), 200))
	}
	if err != nil {
		t.Fatalf("npm test: %v\n%s", err, tail(out.String(), 200))
	}
	if testing.Verbose() {
		t.Log(tail(out.String(), 60))
	}
}

// notReady says why the npm tests cannot run, or "" when they can: npm on
// PATH, and node_modules installed from the current package-lock.json.
func notReady(root string) string {
	if _, err := exec.LookPath("npm"); err != nil {
		return "npm is not installed"
	}
	installed, err := os.Stat(filepath.Join(root, "node_modules", ".package-lock.json"))
	if err != nil {
		return "node_modules is missing"
	}
	lock, err := os.Stat(filepath.Join(root, "package-lock.json"))
	if err != nil {
		return "package-lock.json is missing"
	}
	if lock.ModTime().After(installed.ModTime()) {
		return "node_modules is older than package-lock.json"
	}
	return ""
}

// repoRoot is two levels above the package folder, where go test runs.
func repoRoot(t *testing.T) string {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"…"}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
