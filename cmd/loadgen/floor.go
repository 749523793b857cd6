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
// run by pgbench straight against PostgreSQL with no HTTP and no Go in between. Its
// rounds run interleaved with loadgen's, so both see the same machine.
type floor struct {
	dir, url string // the scripts' folder; the database
	clients  int
	slice    time.Duration
	log      io.Writer
	tps      map[string][]float64 // per script: transactions per second, one per round
}

var tpsLine = regexp.MustCompile(`(?m)^tps = ([0-9.]+)`)

// setUp creates the tenant, API key and replayable record the scripts use (psql).
func (f *floor) setUp(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, "psql", "-v", "ON_ERROR_STOP=1", "-q", "-f",
		filepath.Join(f.dir, "setup.sql"), f.url).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgbench floor: setup.sql: %v: %s", err, out)
	}
	return nil
}

// round runs the unkeyed and the keyed script once each for f.slice.
func (f *floor) round(ctx context.Context) error {
	for _, script := range []string{"unkeyed", "keyed"} {
		out, err := exec.CommandContext(ctx, "pgbench", "-n", "-M", "prepared", "-c", strconv.Itoa(f.clients),
			"-j", "2", "-T", strconv.Itoa(max(1, int(f.slice.Seconds()))),
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

// ratio is the floor's keyed/unkeyed throughput over all rounds.
func (f *floor) ratio() float64 {
	sum := func(s []float64) (t float64) {
		for _, v := range s {
			t += v
		}
		return t
	}
	if u := sum(f.tps["unkeyed"]); u > 0 {
		return sum(f.tps["keyed"]) / u
	}
	return 0
}
