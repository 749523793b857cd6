// Command api is riskapi's one binary: the HTTP server and its administration
// commands (README.md, docs/roles-and-credentials.md). It only parses the command line and wires internal/app;
// stdout carries the commands' JSON results, stderr the logs.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, streams{in: os.Stdin, out: os.Stdout, err: os.Stderr})
	stop()
	var ue usageError
	var help helpRequest
	switch {
	case err == nil:
	case errors.As(err, &help):
		fmt.Fprintln(os.Stdout, help.text)
	case errors.As(err, &ue):
		fmt.Fprintln(os.Stderr, "api: "+ue.Error())
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "api: "+err.Error())
		os.Exit(1)
	}
}

// streams are a command's standard input and outputs.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

// usageError is a bad command, flag or value: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// helpRequest is -h or --help: the text goes to stdout and the exit status is 0.
type helpRequest struct{ text string }

func (h helpRequest) Error() string { return h.text }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// spec is one command of the table below.
type spec struct {
	name    string // "serve", "tenant create", …
	args    string // the synopsis after the name
	summary string // one line for api help
	// settings are the variables the command reads (config.Register), and so the
	// setting flags it takes and its help lists; nil means every one.
	settings []string
	run      func(ctx context.Context, c *command, args []string) error
}

// adminSettings are what the administration commands read (app.OpenAdmin): the
// store, and SECRET_KEY, which seals the secrets they create (a webhook source's)
// and must be the one the server reads, or the server cannot open them.
var adminSettings = []string{"DATABASE_URL", "DATABASE_POOLER", "SECRET_KEY"}

// sweepSettings are what api sweep reads (app.OpenMaintenance): the lease bounds its
// store calls and the age of orphaned upload bytes; no schedule, sessions secret or
// request limits.
var sweepSettings = []string{"DATABASE_URL", "DATABASE_POOLER", "SECRET_KEY", "IDEMPOTENCY_LEASE", "UPLOAD_DIR", "REQUEST_LOG_TTL", "EVENT_TTL", "AUDIT_LOG_TTL"}

// noConfig marks a command that reads no configuration (version, help).
var noConfig = []string{}

// commands is every command; api help lists them in this order.
var commands = []spec{
	{"serve", "[--demo] [flags]", "run the HTTP server (the default with no command)", nil, serve},
	{"migrate", "[flags]", "apply the database schema and exit", adminSettings, migrate},
	{"sweep", "[flags]", "delete expired idempotency records, sessions, request-log entries, events, audit-log entries and orphaned uploads now",
		sweepSettings, sweep},
	{"tenant create", "--name NAME", "create a tenant", adminSettings, tenantCreate},
	{"tenant list", "", "list every tenant, one JSON line each", adminSettings, tenantList},
	{"tenant disable", "--id ID", "refuse the tenant's API keys and sessions (401) until enabled; nothing is deleted", adminSettings, tenantDisable},
	{"tenant enable", "--id ID", "let a disabled tenant's API keys and users in again", adminSettings, tenantEnable},
	{"user create", "--tenant ID --email E (--password P | --password-stdin) [--role admin|member]", "add a user to a tenant", adminSettings, userCreate},
	{"user list", "--tenant ID", "list a tenant's users, one JSON line each", adminSettings, userList},
	{"user delete", "--id ID", "remove a user; their sessions stop working at once", adminSettings, userDelete},
	{"user reset-password", "--id ID", "give a user a new random password, printed this once; their sessions end", adminSettings, userResetPassword},
	{"apikey create", "--tenant ID --scopes SCOPE[,SCOPE…] [--name N]", "issue an API key; its secret is printed this once", adminSettings, apikeyCreate},
	{"apikey list", "--tenant ID", "list a tenant's API keys (never their secrets), one JSON line each", adminSettings, apikeyList},
	{"apikey revoke", "--id ID", "revoke an API key; later requests with it get 401", adminSettings, apikeyRevoke},
	{"webhook create", "--tenant ID --source NAME", "configure an inbound webhook source; its secret is printed this once", adminSettings, webhookCreate},
	{"healthcheck", "[--ready] [--addr ADDR]", "exit 0 when the server on ADDR answers GET /healthz (or /readyz) with 200, else 1 (a container's HEALTHCHECK)",
		[]string{"ADDR"}, healthcheck},
	{"version", "", "print the version (also --version)", noConfig, printVersion},
	{"help", "", "list the commands (also --help, -h); api COMMAND --help describes one", noConfig, nil},
}

// run dispatches args to a command.
func run(ctx context.Context, args []string, getenv func(string) string, std streams) error {
	switch {
	case len(args) == 0:
		return dispatch(ctx, "serve", nil, getenv, std)
	case args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help":
		fmt.Fprint(std.out, overview())
		return nil
	case args[0] == "--version" || args[0] == "-version":
		return dispatch(ctx, "version", args[1:], getenv, std)
	case strings.HasPrefix(args[0], "-"):
		return dispatch(ctx, "serve", args, getenv, std)
	}
	if _, ok := find(args[0]); ok {
		return dispatch(ctx, args[0], args[1:], getenv, std)
	}
	subs := subcommands(args[0])
	if len(subs) == 0 {
		return usagef("unknown command %q; run api help for the list", args[0])
	}
	if len(args) < 2 || strings.HasPrefix(args[1], "-") {
		return usagef("%s needs a subcommand: %s", args[0], strings.Join(subs, ", "))
	}
	name := args[0] + " " + args[1]
	if _, ok := find(name); !ok {
		return usagef("%s has no subcommand %q; want %s", args[0], args[1], strings.Join(subs, ", "))
	}
	return dispatch(ctx, name, args[2:], getenv, std)
}

func find(name string) (spec, bool) {
	for _, s := range commands {
		if s.name == name && s.run != nil {
			return s, true
		}
	}
	return spec{}, false
}

// subcommands lists the subcommands of group ("tenant" → create, list, …).
func subcommands(group string) []string {
	var out []string
	for _, s := range commands {
		if g, sub, ok := strings.Cut(s.name, " "); ok && g == group {
			out = append(out, sub)
		}
	}
	return out
}

func dispatch(ctx context.Context, name string, args []string, getenv func(string) string, std streams) error {
	s, _ := find(name)
	return s.run(ctx, newCommand(s, getenv, std), args)
}

// overview is api help: every command with its synopsis and summary.
func overview() string {
	var b strings.Builder
	b.WriteString("usage: api COMMAND [flags]\n\ncommands:\n")
	for _, s := range commands {
		fmt.Fprintf(&b, "  %-20s %s\n", s.name, s.summary)
	}
	b.WriteString("\nEach command reads the variables its --help lists (DATABASE_URL, …) from the environment;\n")
	b.WriteString("a flag of the same name overrides one. Bad flags or values exit 2.\n")
	return b.String()
}
