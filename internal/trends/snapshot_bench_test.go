package trends_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/risks/riskseed"
	"github.com/riskapi/riskapi/internal/trends"
)

// BenchmarkSnapshotRun measures a run of the schedule's snapshot over
// SNAPSHOT_TENANTS tenants (default 500) of SNAPSHOT_RISKS risks each (default 200),
// each with audit entries of an hour ago (docs/performance.md, "Register
// snapshots"): "recount" is a run in which every tenant is stale (what every run
// did before snapshots kept stale_from), "idle" one in which none changed since
// the last count, alternated in one process.
func BenchmarkSnapshotRun(b *testing.B) {
	tenants, per := envInt("SNAPSHOT_TENANTS", 500), envInt("SNAPSHOT_RISKS", 200)
	db := dbtest.Open(b)
	ctx := context.Background()
	now := time.Now().UTC()
	for i := range tenants {
		id, err := riskseed.Tenant(ctx, db.DB, fmt.Sprintf("t%d", i), per)
		if err != nil {
			b.Fatal(err)
		}
		for j := range 20 {
			at := now.Add(-time.Hour).Add(time.Duration(j) * time.Second)
			if err := db.DB.Exec(`INSERT INTO audit_log (id, tenant_id, occurred_at, actor_type, actor_id, actor_email, action,
				target_type, target_id, request_id, ip, user_agent) VALUES (?, ?, ?, 'system', '', '', 'risk.updated', 'risk', 'risk_x', '', '', '')`,
				ids.NewAt(ids.Audit, at), id, at).Error; err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := db.DB.Exec("ANALYZE").Error; err != nil {
		b.Fatal(err)
	}
	s := &trends.Snapshotter{Store: trends.NewStore(db.DB), PerRun: tenants + 1, Settle: 6 * time.Minute, Now: func() time.Time { return now }}
	if n, err := s.Run(ctx); err != nil || n != tenants {
		b.Fatalf("first run: %d, %v", n, err)
	}
	stale := func() {
		if err := db.DB.Exec("UPDATE register_snapshots SET stale_from = NULL").Error; err != nil {
			b.Fatal(err)
		}
	}
	var recount, idle time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		stale()
		b.StartTimer()
		start := time.Now()
		if n, err := s.Run(ctx); err != nil || n != tenants {
			b.Fatalf("recount: %d, %v", n, err)
		}
		recount += time.Since(start)
		start = time.Now()
		if n, err := s.Run(ctx); err != nil || n != 0 {
			b.Fatalf("idle: %d, %v", n, err)
		}
		idle += time.Since(start)
	}
	b.ReportMetric(float64(recount.Microseconds())/float64(b.N)/1000, "recount-ms/run")
	b.ReportMetric(float64(idle.Microseconds())/float64(b.N)/1000, "idle-ms/run")
	b.ReportMetric(float64(recount)/float64(idle), "recount/idle")
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
