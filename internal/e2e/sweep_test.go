package e2e_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/riskapi/riskapi/internal/app"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/e2e"
	"github.com/riskapi/riskapi/internal/sweep"
)

var (
	sweepRows     = flag.Int("sweep.rows", 0, "expired idempotency records TestSweepUnderLoad inserts and sweeps (0: 50000 on PostgreSQL, 5000 on SQLite; the full run: 1000000)")
	sweepClients  = flag.Int("sweep.clients", 8, "TestSweepUnderLoad: concurrent writers")
	sweepBaseline = flag.Duration("sweep.baseline", 0, "TestSweepUnderLoad: writes measured before the sweep starts (0: 3s, or 20s from 500000 rows)")
	sweepBatch    = flag.Int("sweep.batch", 0, "TestSweepUnderLoad: override the app's Pacing.Size (0: as configured by internal/app), for tuning experiments")
	sweepPause    = flag.Duration("sweep.pause", -1, "TestSweepUnderLoad: override the app's Pacing.Pause (-1: as configured by internal/app), for tuning experiments")
	sweepRest     = flag.Float64("sweep.rest", -1, "TestSweepUnderLoad: override the app's Pacing.Rest (-1: as configured by internal/app), for tuning experiments")
	sweepMaxRatio = flag.Float64("sweep.maxratio", 0, "TestSweepUnderLoad: fail if the write p99 during the sweep exceeds this multiple of the p99 without it (0: report only)")
)

// write is one timed keyed write.
type write struct {
	sent, done time.Time
	ok         bool
}

// TestSweepUnderLoad inserts -sweep.rows expired idempotency records (one INSERT …
// SELECT), then, while writers keep sending keyed writes to a real server, runs the
// app's own sweep (Sweeper, configured exactly as `api sweep` and the scheduled sweep
// are; on SQLite the serving app's own, see serveForSweep) over the same database. It checks that the sweep deletes
// every expired record and nothing else and that every write succeeds, and reports
// the write p99 during the sweep against the p99 of the same writers before it.
//
// Full run (docs/performance.md):
//
//	TEST_DATABASE_URL=postgres://… go test -run TestSweepUnderLoad -sweep.rows=1000000 -v ./internal/e2e/
func TestSweepUnderLoad(t *testing.T) {
	url := dbtest.URL(t)
	creds := e2e.ProvisionT(t, url, t.Name())
	srv, a := serveForSweep(t, url)
	a.Sweeper.Pacing = tuned(a.Sweeper.Pacing)
	t.Logf("sweeper: %+v (Size 0 means 1000)", a.Sweeper.Pacing)
	run := sweepUnderLoad(t, srv, creds, func(ctx context.Context, rows int) {
		insertExpired(t, ctx, a.DB, creds.TenantID, rows)
	}, a.Sweeper.Sweep)

	var expired, live int64
	if err := a.DB.Table("idempotency_records").Where("expires_at <= ?", time.Now().UTC()).Count(&expired).Error; err != nil {
		t.Fatal(err)
	}
	if err := a.DB.Table("idempotency_records").Where("expires_at > ?", time.Now().UTC()).Count(&live).Error; err != nil {
		t.Fatal(err)
	}
	if expired != 0 {
		t.Errorf("%d expired records left after the sweep", expired)
	}
	if live != int64(run.acknowledged) {
		t.Errorf("%d live records for %d acknowledged keyed writes: the sweep deleted live records, or writes were lost", live, run.acknowledged)
	}
}

// TestRequestLogSweepUnderLoad is TestSweepUnderLoad for the request log:
// -sweep.rows entries older than REQUEST_LOG_TTL, deleted by the app's own
// RequestLogSweeper while writers keep sending keyed writes (each of which is
// logged too). Every old entry goes, every entry of the run stays.
//
// Full run (docs/performance.md):
//
//	TEST_DATABASE_URL=postgres://… go test -run TestRequestLogSweepUnderLoad -sweep.rows=1000000 -v ./internal/e2e/
func TestRequestLogSweepUnderLoad(t *testing.T) {
	url := dbtest.URL(t)
	creds := e2e.ProvisionT(t, url, t.Name())
	srv, a := serveForSweep(t, url)
	a.RequestLogSweeper.Pacing = tuned(a.RequestLogSweeper.Pacing)
	t.Logf("sweeper: %+v (Size 0 means 1000), TTL %s", a.RequestLogSweeper.Pacing, a.RequestLogSweeper.TTL)
	var cutoff time.Time
	run := sweepUnderLoad(t, srv, creds, func(ctx context.Context, rows int) {
		cutoff = time.Now().UTC().Add(-a.RequestLogSweeper.TTL)
		insertOldLogEntries(t, ctx, a.DB, creds.TenantID, rows, cutoff)
	}, a.RequestLogSweeper.Sweep)

	var old, kept int64
	if err := a.DB.Table("request_log_entries").Where("created_at < ?", cutoff).Count(&old).Error; err != nil {
		t.Fatal(err)
	}
	// Every write was logged; the server's buffer may still hold the last half
	// second's (its flush interval), so wait for them a little.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if err := a.DB.Table("request_log_entries").Where("created_at >= ?", cutoff).Count(&kept).Error; err != nil {
			t.Fatal(err)
		}
		if kept >= int64(run.writes) || time.Now().After(deadline) {
			break
		}
	}
	if old != 0 {
		t.Errorf("%d old entries left after the sweep", old)
	}
	if kept > int64(run.writes) || kept < int64(run.writes)*9/10 {
		t.Errorf("%d entries of the run kept for %d writes sent", kept, run.writes)
	}
}

// loadRun is what sweepUnderLoad measured.
type loadRun struct {
	writes, acknowledged int
}

// sweepUnderLoad, with the server at srv, inserts the run's rows (-sweep.rows, or a
// CI default) with insert, keeps -sweep.clients writers sending keyed writes, and
// after a baseline runs sweep. It fails t if the sweep does not delete exactly the
// rows inserted or any write fails (or the p99 ratio exceeds -sweep.maxratio), and
// logs the write p99 during the sweep against the p99 before it.
func sweepUnderLoad(t *testing.T, srv string, creds e2e.Credentials, insert func(ctx context.Context, rows int),
	sweep func(ctx context.Context) (int, error)) loadRun {
	t.Helper()
	rows := *sweepRows
	if rows <= 0 {
		// SQLite runs in this test binary's process (pure Go, and ten times slower
		// under -race): a smaller table keeps CI quick and proves the same.
		rows = 5_000
		if dbtest.Postgres() {
			rows = 50_000
		}
	}
	baseline := *sweepBaseline
	if baseline <= 0 {
		baseline = 3 * time.Second
		if rows >= 500_000 {
			baseline = 20 * time.Second
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	start := time.Now()
	insert(ctx, rows)
	t.Logf("inserted %d rows to sweep in %s", rows, time.Since(start).Round(time.Millisecond))

	client := e2e.NewClient(creds.APIKey, *sweepClients)
	defer client.Close()
	var (
		mu     sync.Mutex
		writes []write
		errs   []string
		stop   = make(chan struct{})
		wg     sync.WaitGroup
	)
	for c := range *sweepClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Appendf(nil, `{"title":"sweep load %d-%d","likelihood":3,"impact":4}`, c, i)
				res := client.CreateRisk(ctx, srv, uuid.NewString(), body)
				w := write{sent: res.Sent, done: res.Sent.Add(res.Latency), ok: res.Status == http.StatusCreated}
				mu.Lock()
				writes = append(writes, w)
				if !w.ok && len(errs) < 10 {
					errs = append(errs, res.String())
				}
				mu.Unlock()
				if ctx.Err() != nil {
					return
				}
			}
		}()
	}
	loadStart := time.Now()
	sleepCtx(ctx, baseline)
	sweepStart := time.Now()
	deleted, err := sweep(ctx)
	sweepEnd := time.Now()
	sleepCtx(ctx, 500*time.Millisecond)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("sweep: %v (deleted %d)", err, deleted)
	}

	var before, during []time.Duration
	var failed int
	for _, w := range writes {
		if !w.ok {
			failed++
			continue
		}
		switch {
		case !w.sent.Before(loadStart.Add(500*time.Millisecond)) && w.done.Before(sweepStart):
			before = append(before, w.done.Sub(w.sent)) // after a short warm-up
		case !w.sent.Before(sweepStart) && w.done.Before(sweepEnd):
			during = append(during, w.done.Sub(w.sent))
		}
	}
	took := sweepEnd.Sub(sweepStart)
	sb, sd := e2e.Summarize(before), e2e.Summarize(during)
	ratio := 0.0
	if sb.P99 > 0 {
		ratio = float64(sd.P99) / float64(sb.P99)
	}
	t.Logf("sweep deleted %d rows in %s (%.0f/s); writers: %d clients, %d writes in all, %d failed",
		deleted, took.Round(time.Millisecond), float64(deleted)/took.Seconds(), *sweepClients, len(writes), failed)
	t.Logf("writes without the sweep: %s, %.0f/s", sb, float64(sb.N)/(sweepStart.Sub(loadStart)-500*time.Millisecond).Seconds())
	t.Logf("writes during the sweep:  %s, %.0f/s", sd, float64(sd.N)/took.Seconds())
	t.Logf("write p99 during/without the sweep: %.2f (goal ≤ 2)", ratio)

	if deleted != rows {
		t.Errorf("the sweep deleted %d rows, want the %d inserted to be swept", deleted, rows)
	}
	if failed > 0 {
		t.Errorf("%d writes failed during the run, e.g. %v", failed, errs)
	}
	if sd.N == 0 {
		t.Errorf("no write completed during the sweep (%s)", took)
	}
	if *sweepMaxRatio > 0 && ratio > *sweepMaxRatio {
		t.Errorf("write p99 during the sweep is %.2f× the p99 without it, over -sweep.maxratio %.2f", ratio, *sweepMaxRatio)
	}
	return loadRun{writes: len(writes), acknowledged: len(writes) - failed}
}

// tuned is p with the -sweep.batch, -sweep.pause and -sweep.rest overrides.
func tuned(p sweep.Pacing) sweep.Pacing {
	if *sweepBatch > 0 {
		p.Size = *sweepBatch
	}
	if *sweepPause >= 0 {
		p.Pause = *sweepPause
	}
	if *sweepRest >= 0 {
		p.Rest = *sweepRest
	}
	return p
}

// serveForSweep returns the base URL of a riskapi server on url and the app whose
// sweepers the test runs. On PostgreSQL the server is a process of its own and the
// sweepers are wired as for `api sweep`. On SQLite, whose one instance sweeps on its
// own schedule, the sweepers are the serving app's, in this process: their batches
// queue at the same write gate as the writes (internal/database/writegate.go), as
// they do in production.
func serveForSweep(t *testing.T, url string) (string, *app.Maintenance) {
	t.Helper()
	env := map[string]string{"DATABASE_URL": url, "UPLOAD_DIR": t.TempDir() + "/uploads", "ADDR": "127.0.0.1:0",
		"RATE_LIMIT_RPS": "0", "IDEMPOTENCY_LEASE": "10s", "SWEEP_SCHEDULE": "@every 24h",
		// Without it a PostgreSQL app keeps its key in data/ of the working
		// directory: this package's folder, under go test.
		"SECRET_KEY": strings.Repeat("k", 32)}
	cfg := loadConfig(t, env)
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	if dbtest.Postgres() {
		in := e2e.StartT(t, e2e.Config{DatabaseURL: url, Name: "api", Lease: 10 * time.Second,
			Env: []string{"SWEEP_SCHEDULE=@every 24h"}})
		a, err := app.OpenMaintenance(context.Background(), cfg, logger, app.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		return in.URL(), a
	}
	a, err := app.Open(context.Background(), cfg, logger, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, func(ad net.Addr) { addr <- ad }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		a.Close()
	})
	select {
	case ad := <-addr:
		return "http://" + ad.String(), a.Maintenance
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	return "", nil
}

// loadConfig is riskapi's configuration from env alone.
func loadConfig(t *testing.T, env map[string]string) config.Config {
	t.Helper()
	vals := config.Register(flag.NewFlagSet("sweep", flag.ContinueOnError), func(k string) string { return env[k] })
	cfg, err := config.Load(vals)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// insertOldLogEntries inserts n request-log entries of tenant created before cutoff
// (spread over n milliseconds), in one statement, then puts the table in the state
// an old table is in, like insertExpired.
func insertOldLogEntries(t *testing.T, ctx context.Context, db *database.DB, tenant string, n int, cutoff time.Time) {
	t.Helper()
	oldest := cutoff.Add(-time.Hour - time.Duration(n)*time.Millisecond)
	var stmts []string
	var args []any
	if db.Dialect == database.Postgres {
		stmts = []string{`INSERT INTO request_log_entries (tenant_id, id, request_id, method, path, route, status,
			duration_us, credential_type, credential_id, idempotency_key, idempotency_outcome, error_code, created_at)
			SELECT ?, 'log_' || lpad(to_hex(g), 32, '0'), md5(g::text), 'POST', '/v2/risks', '/v2/risks', 201, 1500,
				'api_key', 'key_old', 'old-key-' || g, 'executed', NULL, CAST(? AS timestamptz) + g * interval '1 millisecond'
			FROM generate_series(1, ?) AS g`,
			`VACUUM ANALYZE request_log_entries`, `CHECKPOINT`}
		args = []any{tenant, oldest, n}
	} else {
		stmts = []string{`WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < ?)
			INSERT INTO request_log_entries (tenant_id, id, request_id, method, path, route, status,
			duration_us, credential_type, credential_id, idempotency_key, idempotency_outcome, error_code, created_at)
			SELECT ?, printf('log_%032x', i), hex(randomblob(16)), 'POST', '/v2/risks', '/v2/risks', 201, 1500,
				'api_key', 'key_old', 'old-key-' || i, 'executed', NULL, ?
			FROM g`,
			`ANALYZE request_log_entries`, `PRAGMA wal_checkpoint(TRUNCATE)`}
		args = []any{n, tenant, oldest}
	}
	if err := db.WithContext(ctx).Exec(stmts[0], args...).Error; err != nil {
		t.Fatalf("insert old request log entries: %v", err)
	}
	for _, s := range stmts[1:] {
		if err := db.WithContext(ctx).Exec(s).Error; err != nil {
			t.Logf("%s: %v", s, err)
		}
	}
}

// insertExpired inserts n complete records that expired a day ago, spread over
// n milliseconds, under random keys as real clients send (UUIDs; on SQLite 32 random
// hex digits), so the primary key's index is as scattered as in production, with a body the size of a risk's, in one statement; then puts the
// table in the state a day-old table is in (vacuumed, analysed, checkpointed).
func insertExpired(t *testing.T, ctx context.Context, db *database.DB, scope string, n int) {
	t.Helper()
	created := time.Now().UTC().Add(-48 * time.Hour)
	expired := time.Now().UTC().Add(-24*time.Hour - time.Duration(n)*time.Millisecond)
	var stmts []string
	var args []any
	if db.Dialect == database.Postgres {
		stmts = []string{`INSERT INTO idempotency_records
			(scope, method, path, idem_key, fingerprint, state, status_code, content_type, body, created_at, updated_at, expires_at)
			SELECT ?, 'POST', '/v2/risks', gen_random_uuid()::text, encode(sha256(g::text::bytea), 'hex'), 'complete', 201,
				'application/json', convert_to(repeat('x', 400), 'UTF8'), CAST(? AS timestamptz), CAST(? AS timestamptz),
				CAST(? AS timestamptz) + g * interval '1 millisecond'
			FROM generate_series(1, ?) AS g`,
			`VACUUM ANALYZE idempotency_records`, `CHECKPOINT`}
		args = []any{scope, created, created, expired, n}
	} else {
		stmts = []string{`WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < ?)
			INSERT INTO idempotency_records
			(scope, method, path, idem_key, fingerprint, state, status_code, content_type, body, created_at, updated_at, expires_at)
			SELECT ?, 'POST', '/v2/risks', lower(hex(randomblob(16))), printf('%064d', i), 'complete', 201,
				'application/json', randomblob(400), ?, ?, ?
			FROM g`,
			`ANALYZE idempotency_records`, `PRAGMA wal_checkpoint(TRUNCATE)`}
		args = []any{n, scope, created, created, expired}
	}
	if err := db.WithContext(ctx).Exec(stmts[0], args...).Error; err != nil {
		t.Fatalf("insert expired records: %v", err)
	}
	for _, s := range stmts[1:] {
		// Housekeeping only (CHECKPOINT needs a privileged role): carry on without it.
		if err := db.WithContext(ctx).Exec(s).Error; err != nil {
			t.Logf("%s: %v", s, err)
		}
	}
}
