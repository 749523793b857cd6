package requestlogstore_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/requestlog"
	"github.com/riskapi/riskapi/internal/requestlog/requestlogstore"
)

// BenchmarkInsert measures one batch insert of 500 entries and reports this
// process's CPU time per entry (on SQLite, the whole cost the log adds to the
// database; on PostgreSQL the server's share is not in it).
func BenchmarkInsert(b *testing.B) {
	s := requestlogstore.New(dbtest.Open(b))
	ctx := context.Background()
	i := 0
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	defer func() { b.ReportMetric(float64((cpu()-start).Microseconds())/float64(b.N*500), "cpu-µs/entry") }()
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
}
