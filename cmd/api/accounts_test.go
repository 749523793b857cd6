package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/tenants"
)

// runStdin runs the CLI with stdin and returns its stdout and error.
func runStdin(t *testing.T, env map[string]string, stdin string, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return env[k] }, streams{in: strings.NewReader(stdin), out: &stdout, err: &stderr})
	return stdout.String(), err
}

// jsonLines decodes out as one JSON object per line.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var rows []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q is not a JSON object: %v", line, err)
		}
		rows = append(rows, m)
	}
	return rows
}

// TestHelpAndVersion: api help, --help and -h list every command and exit 0; a
// command's --help lists its own flags only, with descriptions and defaults.
func TestHelpAndVersion(t *testing.T) {
	t.Parallel()
	env := environment(t)
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		out, _, err := runCmd(t, env, args...)
		if err != nil {
			t.Fatalf("api %v: %v", args, err)
		}
		for _, c := range commands {
			if !strings.Contains(out, "  "+c.name+" ") {
				t.Errorf("api %v does not list %q:\n%s", args, c.name, out)
			}
		}
	}
	_, _, err := runCmd(t, env, "user", "create", "--help")
	var help helpRequest
	if !errors.As(err, &help) {
		t.Fatalf("user create --help = %v, want a help request", err)
	}
	for _, want := range []string{"usage: api user create", "--tenant string", "--password-stdin", "--role string", `(default "admin")`, "--database-url"} {
		if !strings.Contains(help.text, want) {
			t.Errorf("user create --help lacks %q:\n%s", want, help.text)
		}
	}
	for _, not := range []string{"--addr", "--demo", "--rate-limit-rps", "--idempotency-ttl"} {
		if strings.Contains(help.text, not) {
			t.Errorf("user create --help lists another command's flag %s:\n%s", not, help.text)
		}
	}
	// api sweep offers the settings it reads, and only those.
	_, _, err = runCmd(t, env, "sweep", "--help")
	if !errors.As(err, &help) {
		t.Fatalf("sweep --help = %v, want a help request", err)
	}
	for _, want := range []string{"--database-url", "--idempotency-lease", "--upload-dir", "--request-log-ttl", "--event-ttl"} {
		if !strings.Contains(help.text, want) {
			t.Errorf("sweep --help lacks %s:\n%s", want, help.text)
		}
	}
	for _, not := range []string{"--jwt-secret", "--max-upload-bytes", "--idempotency-required", "--idempotency-ttl", "--sweep-schedule", "--addr"} {
		if strings.Contains(help.text, not) {
			t.Errorf("sweep --help offers %s, which it does not read:\n%s", not, help.text)
		}
	}
	_, _, err = runCmd(t, env, "serve", "-h")
	if !errors.As(err, &help) || !strings.Contains(help.text, "--demo") || !strings.Contains(help.text, "--addr") {
		t.Errorf("serve -h = %v", err)
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, _, err := runCmd(t, env, args...)
		if err != nil || !strings.HasPrefix(out, "api ") || strings.Count(out, "\n") != 1 {
			t.Errorf("api %v = %q, %v; want one line \"api <version>\"", args, out, err)
		}
	}
}

// TestGroupsNameTheirSubcommands: a group without (or with an unknown) subcommand is
// a usage error naming the subcommands it has.
func TestGroupsNameTheirSubcommands(t *testing.T) {
	t.Parallel()
	env := environment(t)
	for args, want := range map[string]string{
		"tenant":         "tenant needs a subcommand: create, list, disable, enable",
		"user":           "user needs a subcommand: create, list, delete, reset-password",
		"apikey --id x":  "apikey needs a subcommand: create, list, revoke",
		"tenant destroy": `tenant has no subcommand "destroy"; want create, list, disable, enable`,
	} {
		_, _, err := runCmd(t, env, strings.Fields(args)...)
		var ue usageError
		if !errors.As(err, &ue) || err.Error() != want {
			t.Errorf("api %s = %v, want usage error %q", args, err, want)
		}
	}
}

// TestGroupHelp: api GROUP --help (-h, help) and api help GROUP list the group's
// subcommands with their summaries, and exit 0 with the help on stdout; api help
// GROUP SUBCOMMAND is the subcommand's --help. A group given no subcommand exits 2
// with its one-line error on stderr, followed by the same help. Run through the real
// main, for the exit status.
func TestGroupHelp(t *testing.T) {
	t.Parallel()
	for _, args := range []string{"tenant --help", "tenant -h", "tenant help", "help tenant"} {
		t.Run(args, func(t *testing.T) {
			t.Parallel()
			status, stdout, stderr := runMain(t, args)
			if status != 0 || stderr != "" {
				t.Fatalf("api %s: exit %d, stderr %q; want 0 and nothing on stderr", args, status, stderr)
			}
			if !strings.HasPrefix(stdout, "usage: api tenant SUBCOMMAND") {
				t.Errorf("api %s stdout does not start with the group's usage:\n%s", args, stdout)
			}
			for _, c := range commands {
				if group, sub, _ := strings.Cut(c.name, " "); group == "tenant" && !strings.Contains(stdout, "  "+sub+" ") {
					t.Errorf("api %s does not list %q:\n%s", args, sub, stdout)
				} else if group == "tenant" && !strings.Contains(stdout, c.summary) {
					t.Errorf("api %s does not give %q's summary:\n%s", args, sub, stdout)
				}
			}
		})
	}
	t.Run("help tenant create", func(t *testing.T) {
		t.Parallel()
		status, stdout, stderr := runMain(t, "help tenant create")
		if status != 0 || stderr != "" || !strings.HasPrefix(stdout, "usage: api tenant create --name NAME") || !strings.Contains(stdout, "--name string") {
			t.Errorf("api help tenant create: exit %d, stdout %q, stderr %q; want the command's help and 0", status, stdout, stderr)
		}
	})
	t.Run("tenant", func(t *testing.T) {
		t.Parallel()
		status, stdout, stderr := runMain(t, "tenant")
		first, rest, _ := strings.Cut(stderr, "\n")
		if status != 2 || stdout != "" || first != "api: tenant needs a subcommand: create, list, disable, enable" ||
			!strings.Contains(rest, "usage: api tenant SUBCOMMAND") || !strings.Contains(rest, "  disable ") {
			t.Errorf("api tenant: exit %d, stdout %q, stderr %q; want 2, the error line and the group's help on stderr", status, stdout, stderr)
		}
	})
	t.Run("help nope", func(t *testing.T) {
		t.Parallel()
		if status, _, stderr := runMain(t, "help nope"); status != 2 || !strings.Contains(stderr, `"nope"`) {
			t.Errorf("api help nope: exit %d, stderr %q; want 2 naming it", status, stderr)
		}
	})
}

// TestListAndLifecycleCommands: the list commands print one JSON line per row and no
// secret; user delete and tenant disable end sessions and keys at once; enable
// brings them back; --password-stdin reads the password from stdin.
func TestListAndLifecycleCommands(t *testing.T) {
	t.Parallel()
	env := environment(t)
	ten := mustRun(t, env, "tenant", "create", "--name", "Acme")["id"].(string)
	other := mustRun(t, env, "tenant", "create", "--name", "Globex")["id"].(string)
	out, err := runStdin(t, env, "from stdin 1\n", "user", "create", "--tenant", ten, "--email", "alice@example.com", "--password-stdin")
	if err != nil {
		t.Fatal(err)
	}
	alice := jsonLine(t, out)
	bob := mustRun(t, env, "user", "create", "--tenant", ten, "--email", "bob@example.com", "--password", "password123", "--role", "member")
	if alice["role"] != "admin" || bob["role"] != "member" {
		t.Errorf("roles: alice %v, bob %v", alice["role"], bob["role"])
	}
	key := mustRun(t, env, "apikey", "create", "--tenant", ten, "--scopes", "risks:read")

	out, _, err = runCmd(t, env, "tenant", "list")
	if rows := jsonLines(t, out); err != nil || len(rows) != 2 || rows[0]["id"] != ten || rows[1]["id"] != other || rows[0]["disabledAt"] != nil {
		t.Errorf("tenant list = %q, %v", out, err)
	}
	out, _, err = runCmd(t, env, "user", "list", "--tenant", ten)
	if rows := jsonLines(t, out); err != nil || len(rows) != 2 || strings.Contains(out, "password") || strings.Contains(out, "$2") {
		t.Errorf("user list = %q, %v", out, err)
	}
	out, _, err = runCmd(t, env, "apikey", "list", "--tenant", ten)
	if rows := jsonLines(t, out); err != nil || len(rows) != 1 || rows[0]["id"] != key["id"] ||
		strings.Contains(out, strings.TrimPrefix(key["key"].(string), "rk_")) || rows[0]["key"] != nil ||
		!strings.Contains(out, `"createdBy":{"type":"system","id":""}`) {
		t.Errorf("apikey list = %q, %v (want createdBy system: the CLI made the key)", out, err)
	}
	if out, _, err := runCmd(t, env, "user", "list", "--tenant", other); err != nil || out != "" {
		t.Errorf("user list of an empty tenant = %q, %v", out, err)
	}

	a := openTestApp(t, env)
	login := func(email, password string) string {
		status, body := serveHTTP(a, "POST", "/v1/sessions", "", `{"email":"`+email+`","password":"`+password+`"}`)
		var s struct{ Token string }
		if status != 201 || json.Unmarshal([]byte(body), &s) != nil {
			t.Fatalf("login %s: %d %s", email, status, body)
		}
		return s.Token
	}
	aliceTok, bobTok := login("alice@example.com", "from stdin 1"), login("bob@example.com", "password123")
	expect := func(what, bearer, path string, want int) {
		t.Helper()
		if status, body := serveHTTP(a, "GET", path, bearer, ""); status != want {
			t.Errorf("%s: %d %s, want %d", what, status, body, want)
		}
	}
	mustRun(t, env, "user", "delete", "--id", bob["id"].(string))
	expect("a deleted user's session", bobTok, "/v1/risks", 401)
	expect("another user's session", aliceTok, "/v1/risks", 200)

	mustRun(t, env, "tenant", "disable", "--id", ten)
	expect("a disabled tenant's session", aliceTok, "/v1/risks", 401)
	expect("a disabled tenant's key", key["key"].(string), "/v2/risks", 401)
	out, _, _ = runCmd(t, env, "tenant", "list")
	if rows := jsonLines(t, out); rows[0]["disabledAt"] == nil {
		t.Errorf("tenant list does not show the tenant disabled: %s", out)
	}
	mustRun(t, env, "tenant", "enable", "--id", ten)
	expect("an enabled tenant's session", aliceTok, "/v1/risks", 200)
	expect("an enabled tenant's key", key["key"].(string), "/v2/risks", 200)
}

// TestAccountUsageErrors: bad input to the account commands is a usage error of one
// line naming what is wrong.
func TestAccountUsageErrors(t *testing.T) {
	t.Parallel()
	env := environment(t)
	ten := mustRun(t, env, "tenant", "create", "--name", "Acme")["id"].(string)
	admin := mustRun(t, env, "user", "create", "--tenant", ten, "--email", "a@example.com", "--password", "password123")["id"].(string)
	missingTen, missingUsr := "ten_0193b2c4d5e67f8091a2b3c4d5e6f708", "usr_0193b2c4d5e67f8091a2b3c4d5e6f708"
	tests := []struct {
		args    []string
		stdin   string
		mention string
	}{
		{[]string{"user", "create", "--tenant", ten, "--email", "b@example.com", "--password", "password123", "--role", "owner"}, "", "--role"},
		{[]string{"user", "create", "--tenant", ten, "--email", "b@example.com", "--password", "password123", "--password-stdin"}, "x\n", "not both"},
		{[]string{"user", "create", "--tenant", ten, "--email", "b@example.com", "--password-stdin"}, "", "--password"},
		{[]string{"user", "list"}, "", "--tenant"},
		{[]string{"user", "list", "--tenant", missingTen}, "", "tenant"},
		{[]string{"apikey", "list", "--tenant", missingTen}, "", "tenant"},
		{[]string{"user", "delete"}, "", "--id"},
		{[]string{"user", "delete", "--id", missingUsr}, "", "user"},
		{[]string{"user", "delete", "--id", admin}, "", "last admin"},
		{[]string{"tenant", "disable"}, "", "--id"},
		{[]string{"tenant", "enable", "--id", missingTen}, "", "tenant"},
		{[]string{"tenant", "list", "--name", "x"}, "", "name"},
		{[]string{"version", "--database-url", "x"}, "", "database-url"},
	}
	for _, tt := range tests {
		out, err := runStdin(t, env, tt.stdin, tt.args...)
		var ue usageError
		if !errors.As(err, &ue) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), tt.mention) || out != "" {
			t.Errorf("api %s = %q, %v; want a one-line usage error mentioning %q", strings.Join(tt.args, " "), out, err, tt.mention)
		}
	}
}

// TestHelpExitStatus runs the real main: help and version exit 0 on stdout, a
// command without its required flag exits 2 with one line on stderr. (A group
// without its subcommand: TestGroupHelp.)
func TestHelpExitStatus(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args   string
		status int
	}{{"--help", 0}, {"-h", 0}, {"help", 0}, {"version", 0}, {"--version", 0}, {"tenant create --help", 0}, {"tenant --help", 0}, {"user list", 2}} {
		status, stdout, stderr := runMain(t, tt.args)
		switch {
		case status != tt.status:
			t.Errorf("api %s: exit %d, want %d; stderr %s", tt.args, status, tt.status, stderr)
		case status == 0 && (stdout == "" || stderr != ""):
			t.Errorf("api %s: stdout %q, stderr %q", tt.args, stdout, stderr)
		case status == 2 && (strings.Count(stderr, "\n") != 1 || stdout != ""):
			t.Errorf("api %s: stderr %q, want one line", tt.args, stderr)
		}
	}
}

// runMain runs the real main() with args in a child process, with env added to the
// environment, and returns its exit status and output.
func runMain(t *testing.T, args string, env ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "RISKAPI_TEST_MAIN_ARGS="+args), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, stdout.String(), stderr.String()
}

// TestAPIKeyHelpListsEveryScope: api apikey create --help names every scope there
// is, each with what it allows.
func TestAPIKeyHelpListsEveryScope(t *testing.T) {
	t.Parallel()
	_, _, err := runCmd(t, environment(t), "apikey", "create", "--help")
	var help helpRequest
	if !errors.As(err, &help) {
		t.Fatalf("apikey create --help = %v, want a help request", err)
	}
	for _, s := range tenants.AllScopes {
		if s.Allows() == "" {
			t.Errorf("scope %s does not say what it allows", s)
		}
		if !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(string(s)) + `\s+` + regexp.QuoteMeta(s.Allows()) + `$`).MatchString(help.text) {
			t.Errorf("apikey create --help lacks the line for %s:\n%s", s, help.text)
		}
	}
}

// TestVersionLine: built without -ldflags, api version names the commit and time Go
// recorded, and says when the tree had uncommitted changes.
func TestVersionLine(t *testing.T) {
	t.Parallel()
	stamped := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "bd19d81a0c"},
		{Key: "vcs.time", Value: "2026-12-02T05:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, tt := range []struct {
		set  string
		info *debug.BuildInfo
		want string
	}{
		{"", stamped, "(devel) (revision bd19d81a0c, 2026-12-02T05:00:00Z, modified)"},
		{"v1.2.3", stamped, "v1.2.3 (revision bd19d81a0c, 2026-12-02T05:00:00Z, modified)"},
		{"", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, "v0.4.0"},
		{"", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "(devel)"},
		{"v1.2.3", nil, "v1.2.3"},
	} {
		if got := versionLine(tt.set, tt.info); got != tt.want {
			t.Errorf("versionLine(%q, …) = %q, want %q", tt.set, got, tt.want)
		}
	}
}

// TestUserResetPassword: a lost password is replaced by a new one, printed once;
// the old password and every session of the user stop working at once, another
// user's do not.
func TestUserResetPassword(t *testing.T) {
	t.Parallel()
	env := environment(t)
	ten := mustRun(t, env, "tenant", "create", "--name", "Acme")["id"].(string)
	alice := mustRun(t, env, "user", "create", "--tenant", ten, "--email", "alice@example.com", "--password", "forgotten1")
	mustRun(t, env, "user", "create", "--tenant", ten, "--email", "bob@example.com", "--password", "password123")
	a := openTestApp(t, env)
	login := func(email, password string) (int, string) {
		status, body := serveHTTP(a, "POST", "/v1/sessions", "", `{"email":"`+email+`","password":"`+password+`"}`)
		var s struct{ Token string }
		json.Unmarshal([]byte(body), &s)
		return status, s.Token
	}
	_, aliceTok := login("alice@example.com", "forgotten1")
	_, bobTok := login("bob@example.com", "password123")

	reset := mustRun(t, env, "user", "reset-password", "--id", alice["id"].(string))
	password, _ := reset["password"].(string)
	if reset["id"] != alice["id"] || reset["tenantId"] != ten || reset["email"] != "alice@example.com" || len(password) < 16 {
		t.Fatalf("reset-password printed %v", reset)
	}
	if status, _ := serveHTTP(a, "GET", "/v1/risks", aliceTok, ""); status != 401 {
		t.Errorf("alice's session after the reset: %d, want 401", status)
	}
	if status, _ := serveHTTP(a, "GET", "/v1/risks", bobTok, ""); status != 200 {
		t.Errorf("bob's session after alice's reset: %d, want 200", status)
	}
	if status, _ := login("alice@example.com", "forgotten1"); status != 401 {
		t.Errorf("sign-in with the old password: %d, want 401", status)
	}
	if status, tok := login("alice@example.com", password); status != 201 || tok == "" {
		t.Errorf("sign-in with the new password: %d", status)
	}
	if again := mustRun(t, env, "user", "reset-password", "--id", alice["id"].(string)); again["password"] == password {
		t.Error("a second reset printed the same password")
	}
	for args, mention := range map[string]string{
		"user reset-password": "--id",
		"user reset-password --id usr_0193b2c4d5e67f8091a2b3c4d5e6f708": "user not found",
	} {
		if _, _, err := runCmd(t, env, strings.Fields(args)...); !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), mention) {
			t.Errorf("api %s = %v, want a usage error mentioning %q", args, err, mention)
		}
	}
}
