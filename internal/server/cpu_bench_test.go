package server_test

import (
	"syscall"
	"time"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/e2e"
)

// cpuMeter reads the CPU time this process (the server, in-process, plus the
// benchmark's own client goroutines) and, on PostgreSQL, the backends serving the
// test database have used so far.
type cpuMeter struct{ db *database.DB }

// read returns the process's user+system CPU time (getrusage) and the database
// backends' (from /proc/<pid>/stat of each backend of the current database; zero on
// SQLite, whose work runs inside the process).
func (m cpuMeter) read() (proc, db time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		proc = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if m.db.Dialect != database.Postgres {
		return proc, 0
	}
	var pids []int
	m.db.Raw("SELECT pid FROM pg_stat_activity WHERE datname = current_database()").Scan(&pids)
	for _, pid := range pids {
		if d, err := e2e.ProcessCPU(pid); err == nil {
			db += d
		}
	}
	return proc, db
}
