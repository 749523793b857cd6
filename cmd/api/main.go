// Command api is riskapi's one binary: the HTTP server and its administration
// commands (README.md, Administration and Configuration). It only parses the command line and wires
// internal/app; stdout carries the commands' JSON results, stderr the logs.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
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

// usageError is a bad command, flag or value: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// helpRequest is -h or --help: the text goes to stdout and the exit status is 0.
type helpRequest struct{ text string }

func (h helpRequest) Error() string { return h.text }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

const usage = `usage: api [serve [--demo] | migrate | sweep | tenant create | user create | apikey create | apikey revoke | webhook create] [flags]`

// run dispatches args to a command.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || len(args[0]) > 0 && args[0][0] == '-' {
		return serve(ctx, args, getenv, stdout, stderr)
	}
	cmd, rest := args[0], args[1:]
	two := func(sub string) bool { return len(rest) > 0 && rest[0] == sub }
	switch {
	case cmd == "serve":
		return serve(ctx, rest, getenv, stdout, stderr)
	case cmd == "migrate":
		return migrate(ctx, rest, getenv, stdout, stderr)
	case cmd == "sweep":
		return sweep(ctx, rest, getenv, stdout, stderr)
	case cmd == "tenant" && two("create"):
		return tenantCreate(ctx, rest[1:], getenv, stdout, stderr)
	case cmd == "user" && two("create"):
		return userCreate(ctx, rest[1:], getenv, stdout, stderr)
	case cmd == "apikey" && two("create"):
		return apikeyCreate(ctx, rest[1:], getenv, stdout, stderr)
	case cmd == "apikey" && two("revoke"):
		return apikeyRevoke(ctx, rest[1:], getenv, stdout, stderr)
	case cmd == "webhook" && two("create"):
		return webhookCreate(ctx, rest[1:], getenv, stdout, stderr)
	case cmd == "help" || cmd == "-h" || cmd == "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	return usagef("unknown command %q; %s", cmd, usage)
}
