package main

import (
	"context"
	"fmt"
	"io"
	"os"
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
	lastExited time.Duration // the postmaster's exited children's CPU at the last pgbench run's end
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
	// The checkpointer lives as long as the postmaster, its parent; a pid that is not
	// a postgres process here is another machine's (or a container's).
	out, err := exec.CommandContext(ctx, "psql", "-Atq", "-c",
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'", f.url).Output()
	if pid, perr := strconv.Atoi(strings.TrimSpace(string(out))); err == nil && perr == nil && isPostgres(pid) {
		if pp, err := e2e.ParentPID(pid); err == nil && isPostgres(pp) {
			f.postmaster = pp
		}
	}
	if err := f.psql(ctx, "setup.sql"); err != nil {
		return fmt.Errorf("%w (a database riskapi has not migrated? DATABASE_URL=… api migrate)", err)
	}
	return nil
}

// isPostgres reports whether process pid on this machine runs PostgreSQL's binary.
func isPostgres(pid int) bool {
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	return err == nil && filepath.Base(exe) == "postgres"
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

// round runs each of floorScripts once for f.slice, and measures the database's CPU
// per transaction of each (dbCPU).
func (f *floor) round(ctx context.Context) error {
	for _, script := range floorScripts {
		// A backend's start (authentication, catalog caches, the statements'
		// preparation) costs tens of milliseconds, which riskapi's pooled connections
		// paid long before: one transaction per client first, whose CPU is taken off
		// the timed run's, leaves the transactions' own.
		f.lastExited, _ = f.exitedCPU()
		startCPU, startTx, startOK := f.measured(ctx, script, "-t", "1")
		out, err := f.pgbench(ctx, script, "-T", strconv.Itoa(max(1, int(f.slice.Seconds()))))
		m := tpsLine.FindSubmatch(out)
		if err != nil || m == nil {
			return fmt.Errorf("pgbench %s.sql: %v: %s", script, err, out)
		}
		tps, _ := strconv.ParseFloat(string(m[1]), 64)
		f.tps[script] = append(f.tps[script], tps)
		fmt.Fprintf(f.log, "loadgen: pgbench floor %s: %.1f tps\n", script, tps)
		if cpu, tx, ok := f.cpuOf(ctx, out); ok && startOK && tx > startTx && cpu > startCPU {
			f.cpu[script] = append(f.cpu[script], (cpu-startCPU)/time.Duration(tx-startTx))
		}
	}
	return nil
}

// pgbench runs script with the round's settings and extra's, and returns its output.
func (f *floor) pgbench(ctx context.Context, script string, extra ...string) ([]byte, error) {
	args := append([]string{"-n", "-M", "prepared", "-c", strconv.Itoa(f.clients),
		"-j", strconv.Itoa(min(2, f.clients)), "-f", filepath.Join(f.dir, script+".sql")}, extra...)
	return exec.CommandContext(ctx, "pgbench", append(args, f.url)...).CombinedOutput()
}

// measured runs script as pgbench does with extra and returns the CPU its backends
// used and its transactions; false if either is unknown.
func (f *floor) measured(ctx context.Context, script string, extra ...string) (time.Duration, int, bool) {
	out, err := f.pgbench(ctx, script, extra...)
	if err != nil {
		return 0, 0, false
	}
	return f.cpuOf(ctx, out)
}

// cpuOf is, for a pgbench run that just ended with out, its backends' CPU (once
// they have ended) and its transactions; false if either is unknown. The CPU is the
// postmaster's exited children's since the last call.
func (f *floor) cpuOf(ctx context.Context, out []byte) (time.Duration, int, bool) {
	n := txLine.FindSubmatch(out)
	if n == nil {
		return 0, 0, false
	}
	f.waitBackendsGone(ctx)
	now, ok := f.exitedCPU()
	if !ok {
		return 0, 0, false
	}
	d := now - f.lastExited
	f.lastExited = now
	tx, _ := strconv.Atoi(string(n[1]))
	return d, tx, tx > 0
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
func (f *floor) dbCPU(script string) time.Duration { return meanOf(f.cpu[script]) }

// mean is a script's mean transactions per second over all rounds, 0 if none ran.
func (f *floor) mean(script string) float64 { return meanOf(f.tps[script]) }

// meanOf is the mean of s, 0 if s is empty.
func meanOf[T float64 | time.Duration](s []T) T {
	if len(s) == 0 {
		return 0
	}
	var t T
	for _, v := range s {
		t += v
	}
	return t / T(len(s))
}

// ratio is the throughput of script over unkeyed.sql's over all rounds: "keyed" for
// riskapi's statements, "keyed-onecall" for the one-call design.
func (f *floor) ratio(script string) float64 {
	if u := f.mean("unkeyed"); u > 0 {
		return f.mean(script) / u
	}
	return 0
}
