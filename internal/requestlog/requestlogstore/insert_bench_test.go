package requestlogstore_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/requestlog"
	"github.com/riskapi/riskapi/internal/requestlog/requestlogstore"
)

// BenchmarkInsert inserts batches of 500 entries (half of them keyed) and reports
// the CPU time per entry of this process and, on PostgreSQL when the server runs on
// this machine, of its backend: what the request log adds to every request.
func BenchmarkInsert(b *testing.B) {
	db := dbtest.Open(b)
	sqlDB, err := db.DB.DB()
	if err != nil {
		b.Fatal(err)
	}
	sqlDB.SetMaxOpenConns(1) // one backend, whose CPU time is read from /proc
	var pid int
	if dbtest.Postgres() {
		db.Raw("SELECT pg_backend_pid()").Scan(&pid)
	}
	s := requestlogstore.New(db)
	ctx := context.Background()
	i := 0
	self := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start, pgStart := self(), procCPU(pid)
	for b.Loop() {
		batch := make([]*requestlog.Entry, 500)
		for j := range batch {
			i++
			e := entry(fmt.Sprintf("ten_%d", i%5), fmt.Sprintf("req-%d", i), time.Duration(i)*time.Millisecond)
			if i%2 == 0 {
				e.IdempotencyKey, e.IdempotencyOutcome = "", ""
			}
			batch[j] = e
		}
		if err := s.Insert(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	entries := float64(b.N * 500)
	b.ReportMetric(float64((self()-start).Microseconds())/entries, "cpu-µs/entry")
	if pgStart >= 0 {
		b.ReportMetric(float64((procCPU(pid)-pgStart).Microseconds())/entries, "pg-cpu-µs/entry")
	}
}

// procCPU is the user+system CPU time of process pid from /proc, or -1.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if pid == 0 || err != nil {
		return -1
	}
	f := strings.Fields(string(b)[strings.LastIndex(string(b), ")")+2:])
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	return time.Duration(u+s) * 10 * time.Millisecond // clock ticks of 1/100 s
}
