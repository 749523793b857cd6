package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// floor measures the database's floor for the writes loadgen sends: the same SQL
// statements riskapi issues for an unkeyed and a keyed write (bench/pgbench/*.sql),
// run by pgbench straight against PostgreSQL with no HTTP and no Go in between, and
// the same keyed write in the one-call design (keyed-onecall.sql: one PL/pgSQL
// function call that setup.sql creates and teardown.sql drops). Its rounds run
// interleaved with loadgen's, so all of them see the same machine.
type floor struct {
	dir, url string // the scripts' folder; the database
	clients  int
	slice    time.Duration
	log      io.Writer
	tps      map[string][]float64 // per script: transactions per second, one per round
}

var tpsLine = regexp.MustCompile(`(?m)^tps = ([0-9.]+)`)

// floorScripts are the scripts a round runs, in this order.
var floorScripts = []string{"unkeyed", "keyed", "keyed-onecall"}

// setUp creates the tenant, API key and replayable record the scripts use, and the
// one-call design's function (psql).
func (f *floor) setUp(ctx context.Context) error { return f.psql(ctx, "setup.sql") }

// tearDown drops the one-call design's function (psql).
func (f *floor) tearDown(ctx context.Context) error { return f.psql(ctx, "teardown.sql") }

func (f *floor) psql(ctx context.Context, script string) error {
	out, err := exec.CommandContext(ctx, "psql", "-v", "ON_ERROR_STOP=1", "-q", "-f",
		filepath.Join(f.dir, script), f.url).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgbench floor: %s: %v: %s", script, err, out)
	}
	return nil
}

// round runs each of floorScripts once for f.slice.
func (f *floor) round(ctx context.Context) error {
	for _, script := range floorScripts {
		out, err := exec.CommandContext(ctx, "pgbench", "-n", "-M", "prepared", "-c", strconv.Itoa(f.clients),
			"-j", strconv.Itoa(min(2, f.clients)), "-T", strconv.Itoa(max(1, int(f.slice.Seconds()))),
			"-f", filepath.Join(f.dir, script+".sql"), f.url).CombinedOutput()
		m := tpsLine.FindSubmatch(out)
		if err != nil || m == nil {
			return fmt.Errorf("pgbench %s.sql: %v: %s", script, err, out)
		}
		tps, _ := strconv.ParseFloat(string(m[1]), 64)
		f.tps[script] = append(f.tps[script], tps)
		fmt.Fprintf(f.log, "loadgen: pgbench floor %s: %.1f tps\n", script, tps)
	}
	return nil
}

// mean is a script's mean transactions per second over all rounds, 0 if none ran.
func (f *floor) mean(script string) float64 {
	s := f.tps[script]
	if len(s) == 0 {
		return 0
	}
	t := 0.0
	for _, v := range s {
		t += v
	}
	return t / float64(len(s))
}

// ratio is the throughput of script over unkeyed.sql's over all rounds: "keyed" for
// riskapi's statements, "keyed-onecall" for the one-call design.
func (f *floor) ratio(script string) float64 {
	if u := f.mean("unkeyed"); u > 0 {
		return f.mean(script) / u
	}
	return 0
}
