package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/riskapi/riskapi/internal/config"
)

// command is one invocation: its spec, flag set, configuration values and streams.
type command struct {
	spec
	fs   *flag.FlagSet
	vals *config.Values
	std  streams
	// own are the command's own flags, listed in help with the settings it loads.
	own []string
}

// newCommand registers the flags of the settings the command reads, and only those:
// another setting's flag is unknown to it.
func newCommand(s spec, getenv func(string) string, std streams) *command {
	fs := flag.NewFlagSet(s.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported in one line by main
	c := &command{spec: s, fs: fs, std: std}
	if s.settings == nil || len(s.settings) > 0 {
		c.vals = config.Register(fs, getenv, s.settings...)
	}
	return c
}

// str defines one of the command's own string flags.
func (c *command) str(name, def, usage string) *string {
	c.own = append(c.own, name)
	return c.fs.String(name, def, usage)
}

// boolean defines one of the command's own bool flags.
func (c *command) boolean(name string, usage string) *bool {
	c.own = append(c.own, name)
	return c.fs.Bool(name, false, usage)
}

// parse parses args and loads the configuration; every failure is a usage error.
func (c *command) parse(args []string) (config.Config, error) {
	if err := c.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return config.Config{}, helpRequest{c.help()}
		}
		return config.Config{}, usagef("%s: %v", c.name, err)
	}
	if c.fs.NArg() > 0 {
		return config.Config{}, usagef("%s: unexpected argument %q", c.name, c.fs.Arg(0))
	}
	if c.vals == nil {
		return config.Config{}, nil
	}
	cfg, err := config.Load(c.vals)
	if err != nil {
		return cfg, usageError{msg: err.Error()}
	}
	return cfg, nil
}

// help is api COMMAND --help: the synopsis, the summary and each flag the command
// has — its own and the settings it reads — with its description and default (for a
// setting, the variable it overrides; never a value from the environment, which may
// hold a password).
func (c *command) help() string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: %s\n\n%s\n", strings.TrimSpace("api "+c.name+" "+c.args), c.summary)
	var lines []string
	c.fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if kind != "" {
			line += " " + kind
		}
		line += "\n        " + usage
		if slices.Contains(c.own, f.Name) && f.DefValue != "" && f.DefValue != "false" {
			line += fmt.Sprintf(" (default %q)", f.DefValue)
		}
		lines = append(lines, line)
	})
	if len(lines) > 0 {
		b.WriteString("\nflags:\n" + strings.Join(lines, "\n") + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// password returns the --password value, or with --password-stdin the first line
// of standard input, so a password need not appear in shell history or ps.
func (c *command) password(flagValue string, fromStdin bool) (string, error) {
	if !fromStdin {
		return flagValue, nil
	}
	if flagValue != "" {
		return "", usagef("%s: give --password or --password-stdin, not both", c.name)
	}
	line, err := bufio.NewReader(c.std.in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password from stdin: %w", err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func logger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

func printJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

// version is set at build time (-ldflags "-X main.version=v1.2.3"); otherwise the
// module version Go recorded in the binary is printed, if any.
var version = ""

func printVersion(_ context.Context, c *command, args []string) error {
	if _, err := c.parse(args); err != nil {
		return err
	}
	info, _ := debug.ReadBuildInfo()
	_, err := fmt.Fprintln(c.std.out, "api "+versionLine(version, info))
	return err
}

// versionLine is what api version prints after "api ": the version (set at build
// time, else the module's, else "(devel)") and, when Go recorded the commit the
// binary was built from (go build in a git checkout; not go run, -buildvcs=false or
// a linked worktree), its revision and time, and "modified" for uncommitted changes.
// info may be nil.
func versionLine(set string, info *debug.BuildInfo) string {
	v := set
	if v == "" && info != nil && info.Main.Version != "" {
		v = info.Main.Version
	}
	if v == "" {
		v = "(devel)"
	}
	if info == nil {
		return v
	}
	vcs := map[string]string{}
	for _, s := range info.Settings {
		vcs[s.Key] = s.Value
	}
	rev := vcs["vcs.revision"]
	if rev == "" {
		return v
	}
	v += " (revision " + rev
	if t := vcs["vcs.time"]; t != "" {
		v += ", " + t
	}
	if vcs["vcs.modified"] == "true" {
		v += ", modified"
	}
	return v + ")"
}
