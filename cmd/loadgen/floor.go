package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/riskapi/riskapi/internal/e2e"
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
	// postmaster is PostgreSQL's postmaster process on this machine (0: another
	// machine's, or /proc could not tell); cpu the CPU its backends used per
	// transaction of a script, one per round, when it is known.
	postmaster int
	cpu        map[string][]time.Duration
}

var (
	tpsLine = regexp.MustCompile(`(?m)^tps = ([0-9.]+)`)
	txLine  = regexp.MustCompile(`(?m)^number of transactions actually processed: ([0-9]+)`)
)

// floorScripts are the scripts a round runs, in this order.
var floorScripts = []string{"unkeyed", "keyed", "keyed-onecall"}

// setUp creates the tenant, API key and replayable record the scripts use, and the
// one-call design's function (psql).
// It also finds the postmaster, whose exited children's CPU tells the database's CPU
// per transaction of each script (dbCPU).
func (f *floor) setUp(ctx context.Context) error {
	f.cpu = map[string][]time.Duration{}
	// The checkpointer lives as long as the postmaster, its parent.
	out, err := exec.CommandContext(ctx, "psql", "-Atq", "-c",
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'", f.url).Output()
	if pid, perr := strconv.Atoi(strings.TrimSpace(string(out))); err == nil && perr == nil {
		if pp, err := e2e.ParentPID(pid); err == nil {
			f.postmaster = pp
		}
	}
	return f.psql(ctx, "setup.sql")
}

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
		before, cpuKnown := f.exitedCPU()
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
		if n := txLine.FindSubmatch(out); cpuKnown && n != nil {
			f.waitBackendsGone(ctx)
			after, ok := f.exitedCPU()
			tx, _ := strconv.Atoi(string(n[1]))
			if ok && tx > 0 {
				f.cpu[script] = append(f.cpu[script], (after-before)/time.Duration(tx))
			}
		}
	}
	return nil
}

// exitedCPU is the CPU of the postmaster's backends that have ended so far
// (e2e.ExitedChildrenCPU): across a pgbench run, its connections' CPU — what
// PostgreSQL spends on the script's statements, with no server in between. false
// when the postmaster is not known.
func (f *floor) exitedCPU() (time.Duration, bool) {
	if f.postmaster == 0 {
		return 0, false
	}
	d, err := e2e.ExitedChildrenCPU(f.postmaster)
	return d, err == nil
}

// waitBackendsGone waits, up to 5 s, until pgbench's backends have ended and been
// counted: pgbench exits before the server has reaped its connections.
func (f *floor) waitBackendsGone(ctx context.Context) {
	for range 100 {
		out, err := exec.CommandContext(ctx, "psql", "-Atq", "-c",
			"SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgbench'", f.url).Output()
		if err != nil || strings.TrimSpace(string(out)) == "0" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// dbCPU is the database's mean CPU per transaction of script over the rounds that
// measured it (0 if none did).
func (f *floor) dbCPU(script string) time.Duration {
	s := f.cpu[script]
	if len(s) == 0 {
		return 0
	}
	var t time.Duration
	for _, v := range s {
		t += v
	}
	return t / time.Duration(len(s))
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
