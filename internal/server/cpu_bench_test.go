package server_test

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/riskapi/riskapi/internal/database"
)

// clockTick is the unit of utime and stime in /proc/<pid>/stat (USER_HZ, 100 on
// Linux everywhere riskapi runs).
const clockTick = 10 * time.Millisecond

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
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis; utime and stime are the
		// 14th and 15th of the whole line.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		db += time.Duration(u+s) * clockTick
	}
	return proc, db
}
