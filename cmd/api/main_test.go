package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/app"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/dbtest"
)

// TestMain lets a test run the real main() in a child process, to see its exit status.
func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv("RISKAPI_TEST_MAIN_ARGS"); ok {
		os.Args = append([]string{"api"}, strings.Fields(args)...)
		main()
		os.Exit(0)
	}
	// Run in a folder of the test's own: with PostgreSQL, a command without
	// SECRET_KEY keeps its key in data/ of the working directory.
	dir, err := os.MkdirTemp("", "riskapi-cmd-test-")
	if err == nil {
		err = os.Chdir(dir)
	}
	if err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// environment is a fresh database on the store under test and nothing else set.
func environment(t *testing.T) map[string]string {
	t.Helper()
	return map[string]string{"DATABASE_URL": dbtest.URL(t), "UPLOAD_DIR": t.TempDir(), "ADDR": "127.0.0.1:0",
		// PostgreSQL has no data directory: without it the key file would land here.
		"SECRET_KEY": fmt.Sprintf("test-secret-key-%x", sha256.Sum256([]byte(t.Name())))}
}

// runCmd runs the CLI with args and returns its stdout and stderr.
func runCmd(t *testing.T, env map[string]string, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return env[k] }, streams{in: strings.NewReader(""), out: &stdout, err: &stderr})
	return stdout.String(), stderr.String(), err
}

// jsonLine checks that out is exactly one JSON object on one line and returns it.
func jsonLine(t *testing.T, out string) map[string]any {
	t.Helper()
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
		t.Fatalf("stdout %q is not one line", out)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("stdout %q is not a JSON object: %v", out, err)
	}
	return m
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func mustRun(t *testing.T, env map[string]string, args ...string) map[string]any {
	t.Helper()
	out, errOut, err := runCmd(t, env, args...)
	if err != nil {
		t.Fatalf("api %s: %v\nstderr: %s", strings.Join(args, " "), err, errOut)
	}
	return jsonLine(t, out)
}

var idShape = func(prefix string) *regexp.Regexp { return regexp.MustCompile(`^` + prefix + `_[0-9a-f]{32}$`) }

// openApp opens the application on env's database, as serve would.
func openTestApp(t *testing.T, env map[string]string) *app.App {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	cfg, err := config.Load(config.Register(fs, func(k string) string { return env[k] }))
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func serveHTTP(a *app.App, method, path, bearer, body string) (int, string) {
	req, _ := http.NewRequest(method, "http://riskapi.test"+path, strings.NewReader(body))
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := &recorder{header: http.Header{}}
	a.Echo.ServeHTTP(rec, req)
	return rec.status, rec.body.String()
}

type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = 200
	}
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(s int) { r.status = s }

// TestAdminCommands: tenant, user and key commands print the contract's JSON lines,
// and what they create works against the API.
func TestAdminCommands(t *testing.T) {
	t.Parallel()
	env := environment(t)

	ten := mustRun(t, env, "tenant", "create", "--name", "Acme Corp")
	if diff := cmp.Diff([]string{"id", "name"}, keys(ten)); diff != "" || ten["name"] != "Acme Corp" ||
		!idShape("ten").MatchString(ten["id"].(string)) {
		t.Errorf("tenant create printed %v", ten)
	}
	tenantID := ten["id"].(string)

	user := mustRun(t, env, "user", "create", "--tenant", tenantID, "--email", "Alice@Example.com", "--password", "correct horse")
	if diff := cmp.Diff([]string{"email", "id", "role", "tenantId"}, keys(user)); diff != "" || user["tenantId"] != tenantID ||
		user["email"] != "alice@example.com" || user["role"] != "admin" || !idShape("usr").MatchString(user["id"].(string)) {
		t.Errorf("user create printed %v", user)
	}

	key := mustRun(t, env, "apikey", "create", "--tenant", tenantID, "--scopes", "risks:read,risks:write", "--name", "ci")
	if diff := cmp.Diff([]string{"id", "key", "mode", "name", "scopes", "tenantId"}, keys(key)); diff != "" {
		t.Errorf("apikey create members (-want +got):\n%s", diff)
	}
	if !idShape("key").MatchString(key["id"].(string)) || key["tenantId"] != tenantID ||
		!regexp.MustCompile(`^rk_live_[A-Za-z0-9_-]{43}$`).MatchString(key["key"].(string)) || key["mode"] != "live" ||
		!cmp.Equal(key["scopes"], []any{"risks:read", "risks:write"}) {
		t.Errorf("apikey create printed %v", key)
	}
	readKey := mustRun(t, env, "apikey", "create", "--tenant", tenantID, "--scopes", "risks:read")
	testKey := mustRun(t, env, "apikey", "create", "--tenant", tenantID, "--scopes", "risks:read", "--mode", "test")
	if testKey["mode"] != "test" || !strings.HasPrefix(testKey["key"].(string), "rk_test_") {
		t.Errorf("apikey create --mode test printed %v", testKey)
	}
	if diff := cmp.Diff([]string{"id", "key", "mode", "scopes", "tenantId"}, keys(readKey)); diff != "" {
		t.Errorf("apikey create without --name (-want +got):\n%s", diff)
	}

	a := openTestApp(t, env)
	secret := key["key"].(string)
	if status, body := serveHTTP(a, "POST", "/v2/risks", secret, `{"title":"t"}`); status != 201 {
		t.Fatalf("the new key cannot write: %d %s", status, body)
	}
	if status, body := serveHTTP(a, "POST", "/v2/risks", readKey["key"].(string), `{"title":"t"}`); status != 403 {
		t.Errorf("the read-only key can write: %d %s", status, body)
	}
	if status, body := serveHTTP(a, "POST", "/v1/sessions", "", `{"email":"alice@example.com","password":"correct horse"}`); status != 201 {
		t.Errorf("the new user cannot log in: %d %s", status, body)
	}
	if out, _, _ := runCmd(t, env, "tenant", "create", "--name", "Acme Corp"); jsonLine(t, out)["id"] == tenantID {
		t.Errorf("a second tenant of the same name got the same ID")
	}

	revoked := mustRun(t, env, "apikey", "revoke", "--id", key["id"].(string))
	if revoked["id"] != key["id"] {
		t.Errorf("apikey revoke printed %v", revoked)
	}
	if status, body := serveHTTP(a, "GET", "/v2/risks", secret, ""); status != 401 {
		t.Errorf("a revoked key still works: %d %s", status, body)
	}
	if status, _ := serveHTTP(a, "GET", "/v2/risks", readKey["key"].(string), ""); status != 200 {
		t.Errorf("revoking one key broke another: %d", status)
	}
}

// TestEnvironmentAndFlags: every subcommand reads the environment; a flag overrides it.
func TestEnvironmentAndFlags(t *testing.T) {
	t.Parallel()
	env := environment(t)
	other := environment(t)
	ten := mustRun(t, map[string]string{"DATABASE_URL": "mysql://nowhere"}, "tenant", "create", "--name", "x",
		"--database-url", env["DATABASE_URL"])
	// The tenant is in the flag's database, not in other's.
	if _, _, err := runCmd(t, env, "apikey", "create", "--tenant", ten["id"].(string), "--scopes", "risks:read"); err != nil {
		t.Errorf("tenant not in the --database-url database: %v", err)
	}
	_, _, err := runCmd(t, other, "apikey", "create", "--tenant", ten["id"].(string), "--scopes", "risks:read")
	var ue usageError
	if !errors.As(err, &ue) {
		t.Errorf("tenant found in another database: %v", err)
	}
}

// TestUsageErrors: bad flags and values are usage errors (exit 2) of one line.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	env := environment(t)
	ten := mustRun(t, env, "tenant", "create", "--name", "Acme")["id"].(string)
	mustRun(t, env, "user", "create", "--tenant", ten, "--email", "taken@example.com", "--password", "password1")
	tests := []struct {
		name    string
		args    []string
		mention string
	}{
		{"unknown command", []string{"frobnicate"}, "frobnicate"},
		{"half a command", []string{"tenant"}, "tenant"},
		{"unknown subcommand", []string{"tenant", "delete"}, "tenant"},
		{"unknown flag", []string{"tenant", "create", "--nme", "x"}, "nme"},
		{"stray argument", []string{"tenant", "create", "--name", "x", "extra"}, "extra"},
		{"missing name", []string{"tenant", "create"}, "--name"},
		{"blank name", []string{"tenant", "create", "--name", "  "}, "--name"},
		{"name too long", []string{"tenant", "create", "--name", strings.Repeat("n", 201)}, "name"},
		{"user without email", []string{"user", "create", "--tenant", ten, "--password", "password1"}, "--email"},
		{"bad email", []string{"user", "create", "--tenant", ten, "--email", "nope", "--password", "password1"}, "email"},
		{"short password", []string{"user", "create", "--tenant", ten, "--email", "b@example.com", "--password", "short"}, "password"},
		{"email taken", []string{"user", "create", "--tenant", ten, "--email", "taken@example.com", "--password", "password1"}, "email"},
		{"user for unknown tenant", []string{"user", "create", "--tenant", "ten_0193b2c4d5e67f8091a2b3c4d5e6f708", "--email", "c@example.com", "--password", "password1"}, "tenant"},
		{"key without tenant", []string{"apikey", "create", "--scopes", "risks:read"}, "--tenant"},
		{"key without scopes", []string{"apikey", "create", "--tenant", ten}, "scope"},
		{"unknown scope", []string{"apikey", "create", "--tenant", ten, "--scopes", "risks:read,risks:admin"}, "risks:admin"},
		{"key for unknown tenant", []string{"apikey", "create", "--tenant", "ten_0193b2c4d5e67f8091a2b3c4d5e6f708", "--scopes", "risks:read"}, "tenant"},
		{"revoke without id", []string{"apikey", "revoke"}, "--id"},
		{"revoke unknown key", []string{"apikey", "revoke", "--id", "key_0193b2c4d5e67f8091a2b3c4d5e6f708"}, "key"},
		{"bad duration", []string{"sweep", "--request-log-ttl", "forever"}, "REQUEST_LOG_TTL"},
		{"bad bool", []string{"serve", "--idempotency-required", "perhaps"}, "IDEMPOTENCY_REQUIRED"},
		{"a setting the command does not read", []string{"migrate", "--idempotency-ttl", "1h"}, "idempotency-ttl"},
		{"sweep takes no session secret", []string{"sweep", "--jwt-secret", strings.Repeat("s", 32)}, "jwt-secret"},
		{"bad rate", []string{"serve", "--rate-limit-rps", "fast"}, "RATE_LIMIT_RPS"},
		{"bad database URL", []string{"migrate", "--database-url", "mysql://db"}, "DATABASE_URL"},
		{"bad address", []string{"serve", "--addr", "localhost"}, "ADDR"},
		{"serve flag without command", []string{"--demo=maybe"}, "demo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := runCmd(t, env, tt.args...)
			var ue usageError
			if !errors.As(err, &ue) {
				t.Fatalf("api %s = %v, want a usage error", strings.Join(tt.args, " "), err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, tt.mention) {
				t.Errorf("message %q should be one line mentioning %q", msg, tt.mention)
			}
			if out != "" {
				t.Errorf("stdout %q on a usage error", out)
			}
		})
	}
}

// TestExitStatus runs the real main: 2 and one line for a usage error, 0 for success.
func TestExitStatus(t *testing.T) {
	t.Parallel()
	env := environment(t)
	tests := []struct {
		args   string
		status int
	}{
		{"tenant create", 2},
		{"migrate --idempotency-ttl=never", 2},
		{"migrate", 0},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			t.Parallel()
			status, _, stderr := runMain(t, tt.args, "DATABASE_URL="+env["DATABASE_URL"], "UPLOAD_DIR="+env["UPLOAD_DIR"])
			if status != tt.status {
				t.Fatalf("exit %d, want %d; stderr %s", status, tt.status, stderr)
			}
			if tt.status == 2 {
				if s := stderr; strings.Count(s, "\n") != 1 || !strings.HasPrefix(s, "api: ") {
					t.Errorf("stderr %q, want one line starting with \"api: \"", s)
				}
			}
		})
	}
}

func TestMigrate(t *testing.T) {
	t.Parallel()
	// A database that has never seen the schema.
	fresh := map[string]string{"DATABASE_URL": "sqlite://" + filepath.Join(t.TempDir(), "new", "riskapi.db")}
	first := mustRun(t, fresh, "migrate")
	if n, _ := first["applied"].(float64); n < 1 {
		t.Errorf("first migrate printed %v, want applied ≥ 1", first)
	}
	if diff := cmp.Diff(map[string]any{"applied": 0.0}, mustRun(t, fresh, "migrate")); diff != "" {
		t.Errorf("second migrate (-want +got):\n%s", diff)
	}
	// The store under test, migrated already.
	env := environment(t)
	for range 2 {
		if diff := cmp.Diff(map[string]any{"applied": 0.0}, mustRun(t, env, "migrate")); diff != "" {
			t.Errorf("migrate on a migrated database (-want +got):\n%s", diff)
		}
	}
}

func TestSweep(t *testing.T) {
	t.Parallel()
	env := environment(t)
	if diff := cmp.Diff(map[string]any{"deleted": 0.0}, mustRun(t, env, "sweep")); diff != "" {
		t.Errorf("sweep (-want +got):\n%s", diff)
	}
	// It reads REQUEST_LOG_TTL from the environment (it once kept the default).
	env["REQUEST_LOG_TTL"] = "forever"
	var ue usageError
	if _, _, err := runCmd(t, env, "sweep"); !errors.As(err, &ue) || !strings.Contains(err.Error(), "REQUEST_LOG_TTL") {
		t.Errorf("sweep with REQUEST_LOG_TTL=forever: %v, want a usage error naming it", err)
	}
}

// watcher is an io.Writer that lets a test wait for a substring without sleeping.
type watcher struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func newWatcher() *watcher { return &watcher{wrote: make(chan struct{}, 1)} }

func (w *watcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return n, err
}

func (w *watcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// waitFor returns the first line containing sub, failing after 20 s or when done
// closes first.
func (w *watcher) waitFor(t *testing.T, sub string, done <-chan error) string {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		for _, line := range strings.Split(w.String(), "\n") {
			if strings.Contains(line, sub) {
				return line
			}
		}
		select {
		case <-w.wrote:
		case err := <-done:
			t.Fatalf("exited (%v) before writing %q; output:\n%s", err, sub, w.String())
		case <-deadline:
			t.Fatalf("no %q within 20s; output:\n%s", sub, w.String())
		}
	}
}

// startServe runs "api serve args…" until the returned stop is called, and returns
// its base URL.
func startServe(t *testing.T, env map[string]string, args ...string) (base string, stdout, stderr *watcher, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr = newWatcher(), newWatcher()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve"}, args...), func(k string) string { return env[k] }, streams{out: stdout, err: stderr})
	}()
	line := stderr.waitFor(t, "riskapi listening", done)
	var rec struct{ Addr string }
	if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Addr == "" {
		t.Fatalf("listening line %q: %v", line, err)
	}
	stopped := false
	stop = func() {
		t.Helper()
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve returned %v after its context ended", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("serve did not return after its context ended")
		}
	}
	t.Cleanup(stop)
	return "http://" + rec.Addr, stdout, stderr, stop
}

// TestServeDemo is the walk-through: serve --demo prints the demo credentials
// once; with them a risk is created and listed on /v2 and read through /v1 by bearer
// and by cookie.
func TestServeDemo(t *testing.T) {
	t.Parallel()
	env := environment(t)
	base, stdout, _, stop := startServe(t, env, "--demo")
	demo := jsonLine(t, stdout.String())
	if diff := cmp.Diff([]string{"apiKey", "email", "password", "tenantId"}, keys(demo)); diff != "" {
		t.Fatalf("demo line members (-want +got):\n%s", diff)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	call := func(method, path, bearer, body string, c *http.Client) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var m map[string]any
		json.NewDecoder(res.Body).Decode(&m)
		return res.StatusCode, m
	}

	key := demo["apiKey"].(string)
	status, risk := call("POST", "/v2/risks", key,
		`{"title":"Vendor contract missing a DPA","category":"Third-Party","likelihood":3,"impact":4}`, client)
	if status != 201 || risk["riskScore"] != 12.0 {
		t.Fatalf("create with the demo key: %d %v", status, risk)
	}
	id := risk["id"].(string)
	listed := func(m map[string]any) bool {
		data, _ := m["data"].([]any)
		for _, d := range data {
			if d.(map[string]any)["id"] == id {
				return true
			}
		}
		return false
	}
	if status, list := call("GET", "/v2/risks", key, "", client); status != 200 || !listed(list) {
		t.Errorf("GET /v2/risks: %d %v", status, list)
	}

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Timeout: 10 * time.Second, Jar: jar}
	status, sess := call("POST", "/v1/sessions", "",
		`{"email":"`+demo["email"].(string)+`","password":"`+demo["password"].(string)+`"}`, browser)
	if status != 201 || sess["token"] == nil {
		t.Fatalf("login with the demo credentials: %d %v", status, sess)
	}
	if status, list := call("GET", "/v1/risks", sess["token"].(string), "", client); status != 200 || !listed(list) {
		t.Errorf("GET /v1/risks by bearer: %d %v", status, list)
	}
	if status, list := call("GET", "/v1/risks", "", "", browser); status != 200 || !listed(list) {
		t.Errorf("GET /v1/risks by cookie: %d %v", status, list)
	}
	if status, r := call("POST", "/v1/risks", "", `{"title":"from the browser"}`, browser); status != 201 {
		t.Errorf("POST /v1/risks by cookie: %d %v", status, r)
	}
	stop()

	// A second start on the same database does not print them again.
	_, stdout2, stderr2, stop2 := startServe(t, env, "--demo")
	stop2()
	if out := stdout2.String(); out != "" {
		t.Errorf("second serve --demo printed %q", out)
	}
	if !strings.Contains(stderr2.String(), "demo tenant exists") {
		t.Errorf("second serve --demo does not say why nothing was printed:\n%s", stderr2.String())
	}
	// …and says how to get a new password for the demo user.
	users, _, err := runCmd(t, env, "user", "list", "--tenant", demo["tenantId"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if id := jsonLine(t, users)["id"].(string); !strings.Contains(stderr2.String(), "api user reset-password --id "+id) {
		t.Errorf("second serve --demo does not name api user reset-password --id %s:\n%s", id, stderr2.String())
	}
}

// TestGracefulShutdown: when serving ends, a request in flight still gets its answer
// and Serve returns only after it.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	a := openTestApp(t, environment(t))
	entered, release := make(chan struct{}), make(chan struct{})
	a.Echo.GET("/test-slow", func(c echo.Context) error {
		close(entered)
		<-release
		return c.String(http.StatusOK, "finished")
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() { served <- a.Serve(ctx, func(addr net.Addr) { addrc <- addr }) }()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-served:
		t.Fatalf("Serve: %v", err)
	}

	type result struct {
		status int
		body   string
		err    error
	}
	resc := make(chan result, 1)
	go func() {
		res, err := http.Get("http://" + addr.String() + "/test-slow")
		if err != nil {
			resc <- result{err: err}
			return
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		resc <- result{res.StatusCode, string(b), err}
	}()
	<-entered
	cancel()

	// New connections are refused once shutdown has begun…
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr.String(), time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("still accepting connections 5s after shutdown began")
		}
		time.Sleep(10 * time.Millisecond) // polling the listener: nothing to wait on
	}
	// …while the request in flight holds Serve open.
	select {
	case err := <-served:
		t.Fatalf("Serve returned (%v) with a request in flight", err)
	case r := <-resc:
		t.Fatalf("in-flight request ended early: %+v", r)
	default:
	}
	close(release)
	r := <-resc
	if r.err != nil || r.status != http.StatusOK || r.body != "finished" {
		t.Fatalf("in-flight request: %+v, want 200 finished", r)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve = %v, want nil after a graceful shutdown", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after the last request finished")
	}
}

// TestAdminCommandsIgnoreServerSettings: a variable only the server uses, set wrong in
// a shared environment, cannot stop an administration command; serve still refuses it.
func TestAdminCommandsIgnoreServerSettings(t *testing.T) {
	t.Parallel()
	env := environment(t)
	env["ADDR"], env["RATE_LIMIT_RPS"], env["SWEEP_SCHEDULE"] = "localhost", "fast", "never"
	mustRun(t, env, "migrate")
	mustRun(t, env, "tenant", "create", "--name", "Acme")
	mustRun(t, env, "sweep")
	_, _, err := runCmd(t, env, "serve")
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "ADDR") {
		t.Errorf("serve with a bad ADDR: %v, want a usage error naming ADDR", err)
	}
}

// TestHeadersOverOneMegabyte: a request whose headers are over 1 MB, sent by a
// plain TCP client to the real server, is refused with a problem+json 431 carrying
// a request id, like every other refusal; the server goes on serving.
func TestHeadersOverOneMegabyte(t *testing.T) {
	t.Parallel()
	base, _, stderr, _ := startServe(t, environment(t))
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	// The server answers once it has read 1 MB; the rest may never be read.
	go conn.Write([]byte("GET /healthz HTTP/1.1\r\nHost: riskapi.test\r\nX-Big: " + strings.Repeat("a", 1100<<10) + "\r\n\r\n"))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Type, Title, Code, RequestID string
		Status                       int
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("431 body is not JSON: %v", err)
	}
	if resp.StatusCode != 431 || resp.Header.Get("Content-Type") != "application/problem+json" ||
		body.Code != "HEADERS_TOO_LARGE" || body.Status != 431 || body.Type != "https://riskapi.dev/problems/headers-too-large" ||
		body.RequestID == "" || resp.Header.Get("X-Request-Id") != body.RequestID || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("431: %d %v %+v", resp.StatusCode, resp.Header, body)
	}
	if !strings.Contains(stderr.String(), body.RequestID) {
		t.Errorf("the refusal's request id %s is not in the log:\n%s", body.RequestID, stderr.String())
	}
	if r, err := http.Get(base + "/healthz"); err != nil || r.StatusCode != 200 {
		t.Errorf("GET /healthz after the 431: %v %v", r, err)
	} else {
		r.Body.Close()
	}
}

// TestAdminCommandsReadSecretKey: the administration commands seal what they
// create (a webhook source's secret) under SECRET_KEY. Reading only DATABASE_URL,
// `api webhook create` generated a key of its own, and the server, with the real
// SECRET_KEY, answered that source's deliveries with 500 (found by a fresh user).
func TestAdminCommandsReadSecretKey(t *testing.T) {
	env := environment(t)
	ten := mustRun(t, env, "tenant", "create", "--name", "Acme")
	for _, args := range [][]string{
		{"webhook", "create", "--tenant", ten["id"].(string), "--source", "scanner"},
		{"apikey", "create", "--tenant", ten["id"].(string), "--scopes", "risks:read"},
	} {
		_, errOut, err := runCmd(t, env, args...)
		if err != nil {
			t.Fatalf("api %s: %v\nstderr: %s", strings.Join(args, " "), err, errOut)
		}
		if strings.Contains(errOut, "SECRET_KEY is not set") {
			t.Errorf("api %s ignored SECRET_KEY from the environment: %s", strings.Join(args, " "), errOut)
		}
	}
	out, errOut, err := runCmd(t, env, "webhook", "create", "--help")
	help := out + errOut
	if err != nil {
		help += err.Error()
	}
	if !strings.Contains(help, "--secret-key") {
		t.Errorf("api webhook create --help does not list --secret-key:\n%s", help)
	}
}

// TestServeDemoOnABusyAddress: the demo's credentials are printed once; a start
// that cannot listen must not spend them (found by a fresh user: the line was
// printed, then bind failed, and the next start printed only a user ID).
func TestServeDemoOnABusyAddress(t *testing.T) {
	env := environment(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	env["ADDR"] = busy.Addr().String()
	out, _, err := runCmd(t, env, "serve", "--demo")
	busy.Close()
	if err == nil || !strings.Contains(err.Error(), "listen on") {
		t.Fatalf("serve --demo on a busy address: %v, want a listen error", err)
	}
	if out != "" {
		t.Fatalf("serve --demo printed %q before failing to listen", out)
	}
	env["ADDR"] = "127.0.0.1:0"
	_, stdout, _, stop := startServe(t, env, "--demo")
	defer stop()
	jsonLine(t, stdout.String()) // the credentials, still unspent
}

// TestServeOnABusyAddressMakesNoDatabase: a start that cannot listen fails before it
// creates the SQLite file or its folder (a fresh user found a database made by a
// server that never served).
func TestServeOnABusyAddressMakesNoDatabase(t *testing.T) {
	env := environment(t)
	dir := filepath.Join(t.TempDir(), "data")
	env["DATABASE_URL"] = "sqlite://" + filepath.Join(dir, "riskapi.db")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	env["ADDR"] = busy.Addr().String()
	if _, _, err := runCmd(t, env, "serve"); err == nil || !strings.Contains(err.Error(), "listen on") {
		t.Fatalf("serve on a busy address: %v, want a listen error", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("serve on a busy address left %s behind (stat: %v)", dir, err)
	}
}
