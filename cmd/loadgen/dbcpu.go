package main

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/riskapi/riskapi/internal/e2e"
)

// dbSnapshot is the CPU time each PostgreSQL backend of the run's database had used
// when it was taken, by process id.
type dbSnapshot map[int]time.Duration

// snapshotDB reads the backends of --database-url (psql lists them, /proc gives
// their CPU); nil on SQLite, with --targets, or when psql or /proc cannot tell, so
// the database's CPU is then simply not reported.
func (g *generator) snapshotDB(ctx context.Context) dbSnapshot {
	if g.env.store != "postgres" || len(g.env.insts) == 0 {
		return nil
	}
	out, err := exec.CommandContext(ctx, "psql", "-Atq", "-c",
		"SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
		g.o.databaseURL).Output()
	if err != nil {
		return nil
	}
	s := dbSnapshot{}
	for _, f := range strings.Fields(string(out)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		if d, err := e2e.ProcessCPU(pid); err == nil {
			s[pid] = d
		}
	}
	return s
}

// since is the CPU the backends of s used after from: a backend that connected in
// between counts in full; one that disconnected is lost (the pool keeps its
// connections for minutes, so few do during a phase).
func (s dbSnapshot) since(from dbSnapshot) time.Duration {
	var t time.Duration
	for pid, d := range s {
		t += d - from[pid]
	}
	return t
}
