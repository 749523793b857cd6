package riskstore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/audit"
	"github.com/riskapi/riskapi/internal/audit/auditstore"
	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/events"
	"github.com/riskapi/riskapi/internal/events/eventstore"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskseed"
)

// BenchmarkImportInChunks measures the parts of the import design that would meet
// section 17's 5 s on SQLite without giving up section 13's all-or-nothing
// (docs/performance.md, "A fair share of capacity"): IMPORT_CHUNK_ROWS new risks
// (default 100,000) written with their events and audit entries, each row marked
// with the import's ID in a column the migrations do not have (added here), either
// in ONE transaction (today's import) or in transactions of IMPORT_CHUNK rows
// (default 500), while tenant B's 4 clients create risks one at a time, 50 ms
// apart, as BenchmarkImportFairness's do. After the chunked pass it times what a
// publish would cost if it were one statement over the import's rows: the heat
// map's counts added from them, their marks cleared; and the sweep's deletion of
// an import that died, in batches. It reports B's longest create and p99 beside
// each pass ÷ B's alone in the same run, each pass's length and longest
// transaction, and the share of the rows' time their events and audit entries
// took (what a publish that wrote them at the end would hold the lock for).
// Nothing of the design is built: reads do not filter the mark here.
func BenchmarkImportInChunks(b *testing.B) {
	n := envInt("IMPORT_CHUNK_ROWS", 100_000)
	chunk := envInt("IMPORT_CHUNK", 500)
	db := dbtest.Open(b)
	ctx := context.Background()
	evs, err := eventstore.New(db, bytes.Repeat([]byte{9}, 32))
	if err != nil {
		b.Fatal(err)
	}
	rec := changes.Recorders{audit.Recorder{Store: auditstore.New(db.DB)},
		events.Recorder{Emitter: &events.Emitter{Store: evs, RetryFor: 72 * time.Hour}}}
	s := New(db.DB, rec)
	for _, stmt := range []string{`ALTER TABLE risks ADD COLUMN import_id VARCHAR(40)`,
		`CREATE INDEX idx_risks_import ON risks (import_id) WHERE import_id IS NOT NULL`} {
		if err := db.DB.Exec(stmt).Error; err != nil {
			b.Fatal(err)
		}
	}
	marked := append(slices.Clone(columns), "import_id")
	ctx = changes.WithActor(ctx, changes.Actor{Type: changes.ActorAPIKey, ID: "key_bench"})
	bystander, err := riskseed.Tenant(ctx, db.DB, "bystander", 0)
	if err != nil {
		b.Fatal(err)
	}
	// write imports n risks into tenant under mark in transactions of per rows
	// (all in one when oneTx), and returns its length, its longest transaction and
	// the time its events and audit entries took.
	treat := risks.Treatment("mitigate")
	write := func(tenant, mark string, oneTx bool) (total, longest, records time.Duration) {
		start := time.Now()
		pass := func(ctx context.Context) error {
			for from := 0; from < n; from += chunk {
				t0 := time.Now()
				var inserted time.Duration
				err := s.point.WriteAll(ctx, func(ctx context.Context) ([]changes.Change, error) {
					rows := make([][]any, 0, chunk)
					cs := make([]changes.Change, 0, chunk)
					for i := from; i < min(from+chunk, n); i++ {
						l, im := 1+i%5, 1+(i/5)%5
						r, err := risks.New(ids.New(ids.Risk), tenant, risks.Fields{Title: str(fmt.Sprint("Imported risk ", i)),
							Description: str(fmt.Sprintf("found in the %d audit", i%7)), Category: str("security"),
							Likelihood: &l, Impact: &im, Owner: str(fmt.Sprintf("owner%d@example.com", i%13)), Treatment: &treat,
							ReviewDate: str(fmt.Sprintf("2026-%02d-15", 1+i%12)), Metadata: map[string]string{"row": strconv.Itoa(i)}},
							time.Now())
						if err != nil {
							return nil, err
						}
						ext := fmt.Sprint("IMP-", i)
						r.ExternalID = &ext
						rows = append(rows, append(values(toRow(r)), mark))
						cs = append(cs, change(changes.RiskCreated, nil, r))
					}
					t := time.Now()
					err := database.InsertRows(ctx, s.db, "risks", marked, rows)
					inserted = time.Since(t)
					return cs, err
				})
				if err != nil {
					return err
				}
				records += time.Since(t0) - inserted
				longest = max(longest, time.Since(t0))
			}
			return nil
		}
		var err error
		if oneTx {
			err = database.RunInTx(ctx, s.db, pass)
		} else {
			err = pass(ctx)
		}
		if err != nil {
			b.Fatal(err)
		}
		if oneTx {
			longest = time.Since(start)
		}
		return time.Since(start), longest, records
	}
	timed := func(what string, fn func() error) {
		start := time.Now()
		if err := fn(); err != nil {
			b.Fatalf("%s: %v", what, err)
		}
		b.ReportMetric(time.Since(start).Seconds(), what+"-s")
	}
	for b.Loop() {
		alone := createsBeside(b, s, bystander, func() { time.Sleep(3 * time.Second) })
		aloneP99, aloneMax := alone[len(alone)*99/100], alone[len(alone)-1]
		for _, oneTx := range []bool{true, false} {
			name := "chunked"
			if oneTx {
				name = "one-tx"
			}
			tenant, err := riskseed.Tenant(ctx, db.DB, "importer "+name, 0)
			if err != nil {
				b.Fatal(err)
			}
			mark := ids.New(ids.Risk)
			var total, longest, records time.Duration
			waits := createsBeside(b, s, bystander, func() { total, longest, records = write(tenant, mark, oneTx) })
			b.ReportMetric(waits[len(waits)-1].Seconds(), name+"-b-max-s")
			b.ReportMetric(float64(waits[len(waits)-1])/float64(aloneMax), name+"-b-max-x-alone")
			b.ReportMetric(float64(waits[len(waits)*99/100])/float64(aloneP99), name+"-b-p99-x-alone")
			b.ReportMetric(total.Seconds(), name+"-import-s")
			b.ReportMetric(longest.Seconds(), name+"-longest-tx-s")
			b.ReportMetric(records.Seconds()/total.Seconds(), name+"-records-share")
			if oneTx {
				continue
			}
			timed("publish-heat-counts", func() error {
				return database.RunInTx(ctx, s.db, func(ctx context.Context) error {
					return database.Conn(ctx, s.db).Exec(`INSERT INTO risk_heat_counts (tenant_id, status, treatment,
						likelihood, impact, residual_likelihood, residual_impact, n, folded)
					SELECT tenant_id, status, COALESCE(treatment, ''), COALESCE(likelihood, 0), COALESCE(impact, 0),
						COALESCE(residual_likelihood, 0), COALESCE(residual_impact, 0), COUNT(*), TRUE
					FROM risks WHERE import_id = ?
					GROUP BY tenant_id, status, COALESCE(treatment, ''), COALESCE(likelihood, 0), COALESCE(impact, 0),
						COALESCE(residual_likelihood, 0), COALESCE(residual_impact, 0)
					ON CONFLICT (tenant_id, status, treatment, likelihood, impact, residual_likelihood, residual_impact)
						WHERE folded DO UPDATE SET n = risk_heat_counts.n + excluded.n`, mark).Error
				})
			})
			timed("publish-clear-marks", func() error {
				return database.RunInTx(ctx, s.db, func(ctx context.Context) error {
					return database.Conn(ctx, s.db).Exec(`UPDATE risks SET import_id = NULL WHERE import_id = ?`, mark).Error
				})
			})
			// The sweep of an import that died: its rows deleted 1,000 at a time (each
			// a transaction), with the search entries and counts their triggers take.
			if err := db.DB.Exec(`UPDATE risks SET import_id = ? WHERE tenant_id = ?`, mark, tenant).Error; err != nil {
				b.Fatal(err)
			}
			var longestDelete time.Duration
			timed("sweep-delete", func() error {
				for {
					t0 := time.Now()
					var gone int64
					err := database.RunInTx(ctx, s.db, func(ctx context.Context) error {
						res := database.Conn(ctx, s.db).Exec(`DELETE FROM risks WHERE id IN
							(SELECT id FROM risks WHERE import_id = ? LIMIT 1000)`, mark)
						gone = res.RowsAffected
						return res.Error
					})
					longestDelete = max(longestDelete, time.Since(t0))
					if err != nil || gone == 0 {
						return err
					}
				}
			})
			b.ReportMetric(longestDelete.Seconds(), "sweep-longest-tx-s")
		}
	}
}

// createsBeside has 4 clients create risks of tenant one after another, 50 ms
// apart, each create its own transaction, while during runs; it returns how long
// each took, sorted.
func createsBeside(b *testing.B, s *Store, tenant string, during func()) []time.Duration {
	done := make(chan struct{})
	var mu sync.Mutex
	var waits []time.Duration
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := changes.WithActor(context.Background(), changes.Actor{Type: changes.ActorAPIKey, ID: "key_b"})
			for j := 0; ; j++ {
				select {
				case <-done:
					return
				default:
				}
				l, im := 2, 3
				start := time.Now()
				r, err := risks.New(ids.New(ids.Risk), tenant, risks.Fields{Title: str(fmt.Sprintf("B %d-%d", c, j)),
					Likelihood: &l, Impact: &im}, time.Now())
				if err == nil {
					err = s.Create(ctx, r)
				}
				if err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				waits = append(waits, time.Since(start))
				mu.Unlock()
				time.Sleep(50 * time.Millisecond)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	during()
	close(done)
	wg.Wait()
	slices.Sort(waits)
	return waits
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
