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
		if ue.help != "" {
			fmt.Fprintln(os.Stderr, "\n"+ue.help)
		}
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

// usageError is a bad command, flag or value: exit status 2. Its message is one
// line; help, when set, is printed after it (a group given no subcommand).
type usageError struct{ msg, help string }

func (e usageError) Error() string { return e.msg }

// helpRequest is -h or --help: the text goes to stdout and the exit status is 0.
type helpRequest struct{ text string }

func (h helpRequest) Error() string { return h.text }

func usagef(format string, args ...any) error { return usageError{msg: fmt.Sprintf(format, args...)} }

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
	{"help", "", "list the commands (also --help, -h); api COMMAND --help (or api help COMMAND) describes one", noConfig, nil},
}

// run dispatches args to a command.
func run(ctx context.Context, args []string, getenv func(string) string, std streams) error {
	switch {
	case len(args) == 0:
		return dispatch(ctx, "serve", nil, getenv, std)
	case args[0] == "help" && len(args) > 1:
		return helpOf(ctx, args[1:], getenv, std)
	case isHelp(args[0]):
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
	if len(args) > 1 && isHelp(args[1]) {
		return helpRequest{groupHelp(args[0])}
	}
	if len(args) < 2 || strings.HasPrefix(args[1], "-") {
		return usageError{msg: fmt.Sprintf("%s needs a subcommand: %s", args[0], strings.Join(subs, ", ")), help: groupHelp(args[0])}
	}
	name := args[0] + " " + args[1]
	if _, ok := find(name); !ok {
		return usagef("%s has no subcommand %q; want %s", args[0], args[1], strings.Join(subs, ", "))
	}
	return dispatch(ctx, name, args[2:], getenv, std)
}

// isHelp reports whether arg asks for help: help, -h, --help or -help.
func isHelp(arg string) bool {
	return arg == "help" || arg == "-h" || arg == "--help" || arg == "-help"
}

// helpOf is api help COMMAND…: the help of a command or of a group, as its --help.
func helpOf(ctx context.Context, args []string, getenv func(string) string, std streams) error {
	if isHelp(args[0]) {
		fmt.Fprint(std.out, overview())
		return nil
	}
	if strings.HasPrefix(args[0], "-") {
		return usagef("help: no command %q; run api help for the list", args[0])
	}
	err := run(ctx, append(args, "--help"), getenv, std)
	var help helpRequest
	if errors.As(err, &help) {
		return err
	}
	return usagef("help: no command %q; run api help for the list", strings.Join(args, " "))
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

// groupHelp is api GROUP --help: the group's subcommands with their synopses and
// summaries.
func groupHelp(group string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: api %s SUBCOMMAND [flags]\n\nsubcommands:\n", group)
	for _, s := range commands {
		if g, sub, ok := strings.Cut(s.name, " "); ok && g == group {
			fmt.Fprintf(&b, "  %-16s %s\n", sub, s.summary)
		}
	}
	fmt.Fprintf(&b, "\napi %s SUBCOMMAND --help lists its flags.", group)
	return b.String()
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
