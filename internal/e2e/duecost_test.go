package e2e_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/riskapi/riskapi/internal/app"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/e2e"
)

var (
	dueRisks   = flag.Int("due.risks", 20000, "TestDueFinderCost: risks in the register (the full run: 1000000)")
	duePhase   = flag.Duration("due.phase", 4*time.Second, "TestDueFinderCost: how long writes are measured with and without the finder")
	dueClients = flag.Int("due.clients", 8, "TestDueFinderCost: concurrent writers")
)

// TestDueFinderCost measures the schedule's cost at -due.risks risks whose review
// dates spread over two years around today (half overdue, a few due soon), all
// already noticed (the steady state: the finder reads them again on every run and
// finds nothing new): the duration of one run of the finder (p50, p99 over the runs
// of the phase) and the write throughput of a real server while the finder runs
// back to back, as a ratio of the throughput without it.
//
//	TEST_DATABASE_URL=postgres://… go test -count=1 -timeout 60m -run TestDueFinderCost -v ./internal/e2e/ -due.risks=1000000 -due.phase=20s
func TestDueFinderCost(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("the server under load is a process of its own on PostgreSQL")
	}
	url := dbtest.URL(t)
	creds := e2e.ProvisionT(t, url, t.Name())
	in := e2e.StartT(t, e2e.Config{DatabaseURL: url, Name: "api", Env: []string{"SCHEDULE_SPEC=@every 24h"}})
	cfg := loadConfig(t, map[string]string{"DATABASE_URL": url, "UPLOAD_DIR": t.TempDir(), "SECRET_KEY": strings.Repeat("k", 32)})
	a, err := app.OpenMaintenance(context.Background(), cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)), app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ctx := context.Background()
	start := time.Now()
	err = a.DB.Exec(`INSERT INTO risks (id, tenant_id, title, description, category, status, owner, version, metadata,
		review_date, created_at, updated_at)
		SELECT 'risk_' || lpad(to_hex(g), 32, '0'), ?, 'risk ' || g, '', '', 'open', '', 1, '{}',
			to_char(current_date - 365 + (g % 730), 'YYYY-MM-DD'), now(), now()
		FROM generate_series(1, ?) g`, creds.TenantID, *dueRisks).Error
	if err == nil {
		// Everything due now has had its notice: the steady state.
		err = a.DB.Exec(`INSERT INTO due_notices (id, tenant_id, kind, object_id, due_date, created_at)
			SELECT 'evt_' || md5(k || id), tenant_id, k, id, review_date, now()
			FROM risks, (VALUES ('risk.review_due'), ('risk.review_overdue')) v(k)
			WHERE tenant_id = ? AND review_date <= to_char(current_date + 7, 'YYYY-MM-DD')`, creds.TenantID).Error
	}
	if err == nil {
		err = a.DB.Exec("ANALYZE risks; ANALYZE due_notices").Error
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("inserted %d risks and their notices in %s", *dueRisks, time.Since(start).Round(time.Millisecond))

	client := e2e.NewClient(creds.APIKey, *dueClients)
	defer client.Close()
	var writes, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := range *dueClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				res := client.CreateRisk(ctx, in.URL(), uuid.NewString(), fmt.Appendf(nil, `{"title":"load %d-%d"}`, c, i))
				if res.Status == http.StatusCreated {
					writes.Add(1)
				} else {
					failed.Add(1)
				}
			}
		}()
	}
	time.Sleep(500 * time.Millisecond) // warm-up
	w0 := writes.Load()
	time.Sleep(*duePhase)
	without := float64(writes.Load()-w0) / duePhase.Seconds()

	var runs []time.Duration
	w1, phaseEnd := writes.Load(), time.Now().Add(*duePhase)
	emitted := 0
	for time.Now().Before(phaseEnd) {
		t0 := time.Now()
		n, err := a.Due.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		emitted += n
		runs = append(runs, time.Since(t0))
	}
	during := float64(writes.Load()-w1) / time.Since(phaseEnd.Add(-*duePhase)).Seconds()
	close(stop)
	wg.Wait()
	s := e2e.Summarize(runs)
	t.Logf("finder over %d risks: %d runs back to back, one run p50 %s, p99 %s; %d notices emitted",
		*dueRisks, len(runs), s.P50, s.P99, emitted)
	t.Logf("writes: %.0f/s without the finder, %.0f/s while it runs back to back: ratio %.2f (load %d clients)",
		without, during, during/without, *dueClients)
	if failed.Load() > 0 {
		t.Errorf("%d writes failed", failed.Load())
	}
	if emitted > 0 {
		t.Errorf("the steady state emitted %d notices; want none (every due item was noticed)", emitted)
	}
}
