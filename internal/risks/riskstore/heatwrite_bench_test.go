package riskstore

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskseed"
)

// BenchmarkHeatCountWrites measures what keeping the heat map's counts costs
// writes: 16 clients creating risks in ONE tenant (the case where counter rows
// would queue), with the counts' triggers and without them (dropped and put back
// from the catalog), in alternating rounds of HEAT_WRITE_ROWS creates (default
// 4,000) in the same run. It reports each way's creates/s and their ratio
// (docs/performance.md, "The register at size"). Each create is the store's, its
// change recorded nowhere, so the triggers' share of a write is larger here than
// through the API.
func BenchmarkHeatCountWrites(b *testing.B) {
	rows := 4000
	if v, err := strconv.Atoi(os.Getenv("HEAT_WRITE_ROWS")); err == nil && v > 0 {
		rows = v
	}
	db := dbtest.Open(b)
	s := New(db.DB, discard{})
	ctx := context.Background()
	tenant, err := riskseed.Tenant(ctx, db.DB, "writes", 10_000)
	if err != nil {
		b.Fatal(err)
	}
	defs := triggerDefs(b, s)
	current := true // migrated with the triggers
	set := func(on bool) {
		if on == current {
			return
		}
		current = on
		for name, def := range defs {
			stmt := "DROP TRIGGER " + name
			if s.postgres() {
				stmt += " ON risks"
			}
			if on {
				stmt = def
			}
			if err := s.db.Exec(stmt).Error; err != nil {
				b.Fatal(err)
			}
		}
	}
	round := func() float64 {
		const clients = 16
		var wg sync.WaitGroup
		start := time.Now()
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := c; i < rows; i += clients {
					l, im := 1+i%5, 1+(i/5)%5
					r, err := risks.New(ids.New(ids.Risk), tenant, risks.Fields{Title: str(fmt.Sprint("w", i)),
						Likelihood: &l, Impact: &im}, time.Now())
					if err == nil {
						err = s.Create(ctx, r)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		return float64(rows) / time.Since(start).Seconds()
	}
	var with, without float64
	for _, on := range []bool{false, true, true, false} { // ABBA: neither way gets the later, bigger table alone
		set(on)
		if on {
			with += round() / 2
		} else {
			without += round() / 2
		}
	}
	b.ReportMetric(with, "creates/s-counted")
	b.ReportMetric(without, "creates/s-uncounted")
	b.ReportMetric(with/without, "ratio")
	b.Logf("16 clients, one tenant, %d creates per round: %.0f/s with the counts, %.0f/s without, ratio %.3f",
		rows, with, without, with/without)
}

// triggerDefs are the counts' triggers on risks, by name, as CREATE statements.
func triggerDefs(b *testing.B, s *Store) map[string]string {
	var defs []struct{ Name, Def string }
	q := `SELECT name, sql AS def FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'risks_heat_%'`
	if s.postgres() {
		q = `SELECT tgname AS name, pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE tgname LIKE 'risks_heat_%'`
	}
	if err := s.db.Raw(q).Scan(&defs).Error; err != nil || len(defs) != 3 {
		b.Fatalf("the counts' triggers: %v, %v", defs, err)
	}
	out := map[string]string{}
	for _, d := range defs {
		out[d.Name] = d.Def
	}
	return out
}

func str(s string) *string { return &s }
