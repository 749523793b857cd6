package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestHelpListsEveryFlag: --help prints the usage of every flag, --env's included,
// and nothing about a panic (flag's usage output calls String on a zero envFlags).
func TestHelpListsEveryFlag(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), []string{arg}, &stdout, &stderr); err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
		out := stderr.String()
		if strings.Contains(out, "panic") {
			t.Errorf("%s printed a panic:\n%s", arg, out)
		}
		for _, flag := range []string{"-env value", "-spawn", "-pgbench-time", "-races"} {
			if !strings.Contains(out, flag) {
				t.Errorf("%s: usage lacks %q:\n%s", arg, flag, out)
			}
		}
	}
}

// TestEnvFlagRepeats: --env may be given many times, and each K=V reaches the
// spawned instances' environment in order; a value without "=" is refused.
func TestEnvFlagRepeats(t *testing.T) {
	o, err := parse([]string{"--spawn", "1", "--database-url", "sqlite:///x.db",
		"--env", "DATABASE_MAX_CONNS=16", "--env", "A=b=c"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(o.env, " "); got != "DATABASE_MAX_CONNS=16 A=b=c" {
		t.Errorf("env = %q", got)
	}
	if _, err := parse([]string{"--spawn", "1", "--database-url", "sqlite:///x.db", "--env", "NOVALUE"}, &bytes.Buffer{}); err == nil {
		t.Error("--env NOVALUE was accepted")
	}
}
