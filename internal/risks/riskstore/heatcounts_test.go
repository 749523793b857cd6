package riskstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskseed"
	"github.com/riskapi/riskapi/internal/risks/riskstore"
)

// stored is a risk's row as the hand counts read it.
type stored struct {
	Status, Category, Owner, Title, Description, Metadata  string
	Treatment, ReviewDate                                  *string
	Likelihood, Impact, ResidualLikelihood, ResidualImpact *int
	RiskScore                                              *int
}

// storedRisks reads every risk of tenant straight from the table.
func storedRisks(t *testing.T, db *database.DB, tenant string) []stored {
	t.Helper()
	var out []stored
	if err := db.Table("risks").Where("tenant_id = ?", tenant).Find(&out).Error; err != nil {
		t.Fatal(err)
	}
	return out
}

// byHand is the heat map of the rows keep holds for, counted in Go.
func byHand(rows []stored, basis risks.Basis, keep func(stored) bool) risks.Heatmap {
	var h risks.Heatmap
	for _, r := range rows {
		if !keep(r) {
			continue
		}
		l, i := r.Likelihood, r.Impact
		if basis == risks.BasisResidual {
			l, i = r.ResidualLikelihood, r.ResidualImpact
		}
		if l == nil || i == nil {
			h.Unassessed++
			continue
		}
		h.Counts[*l-1][*i-1]++
	}
	return h
}

// countFilters are the heat maps the counts answer: none, each status, each
// treatment, and some of both.
func countFilters() []risks.Query {
	out := []risks.Query{{}, {Statuses: []risks.Status{risks.StatusOpen, risks.StatusClosed},
		Treatments: []risks.Treatment{risks.TreatmentMitigate, risks.TreatmentAccept}}}
	for _, s := range risks.Statuses {
		out = append(out, risks.Query{Statuses: []risks.Status{s}})
	}
	for _, tr := range risks.Treatments {
		out = append(out, risks.Query{Treatments: []risks.Treatment{tr}})
	}
	// A heat-map cell's factors, as its list asks for them.
	out = append(out, risks.Query{Likelihoods: []int{2, 3}}, risks.Query{Impacts: []int{4}},
		risks.Query{Statuses: []risks.Status{risks.StatusOpen}, ResidualLikelihoods: []int{1}, ResidualImpacts: []int{1, 5}})
	return out
}

// among is whether v is set and one of ns (no ns: no filter).
func among(v *int, ns []int) bool {
	return len(ns) == 0 || (v != nil && slices.Contains(ns, *v))
}

// selects is q's status, treatment and factor filter, by hand.
func selects(q risks.Query) func(stored) bool {
	return func(r stored) bool {
		okS := len(q.Statuses) == 0
		for _, s := range q.Statuses {
			okS = okS || r.Status == string(s)
		}
		okT := len(q.Treatments) == 0
		for _, tr := range q.Treatments {
			okT = okT || (r.Treatment != nil && *r.Treatment == string(tr))
		}
		return okS && okT && among(r.Likelihood, q.Likelihoods) && among(r.Impact, q.Impacts) &&
			among(r.ResidualLikelihood, q.ResidualLikelihoods) && among(r.ResidualImpact, q.ResidualImpacts)
	}
}

// checkCounts: every heat map the counts answer equals the count by hand over the
// tenant's risks, both bases, read both through Heatmap and the counts directly.
func checkCounts(t *testing.T, db *database.DB, s *riskstore.Store, tenant, when string) {
	t.Helper()
	ctx := context.Background()
	rows := storedRisks(t, db, tenant)
	for _, q := range countFilters() {
		if !riskstore.Countable(q) {
			t.Fatalf("%+v should be answered by the counts", q)
		}
		for _, basis := range []risks.Basis{risks.BasisInherent, risks.BasisResidual} {
			want := byHand(rows, basis, selects(q))
			got, err := s.Heatmap(ctx, tenant, q, basis)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, *got); diff != "" {
				t.Errorf("%s: heat map %s of %v %v (-by hand +counts):\n%s", when, basis, q.Statuses, q.Treatments, diff)
			}
		}
	}
}

// heatKeys is tenant's risk_heat_counts summed by key (rows of 0 left out).
func heatKeys(t *testing.T, db *database.DB, tenant string) map[string]int {
	t.Helper()
	var rows []struct {
		Status, Treatment                                      string
		Likelihood, Impact, ResidualLikelihood, ResidualImpact int
		N                                                      int
	}
	if err := db.Raw(`SELECT status, treatment, likelihood, impact, residual_likelihood, residual_impact, SUM(n) AS n
		FROM risk_heat_counts WHERE tenant_id = ?
		GROUP BY status, treatment, likelihood, impact, residual_likelihood, residual_impact`, tenant).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, r := range rows {
		if r.N != 0 {
			out[fmt.Sprint(r.Status, r.Treatment, r.Likelihood, r.Impact, r.ResidualLikelihood, r.ResidualImpact)] = r.N
		}
	}
	return out
}

// handKeys is heatKeys counted by hand over tenant's risks.
func handKeys(t *testing.T, db *database.DB, tenant string) map[string]int {
	t.Helper()
	zero := func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	}
	out := map[string]int{}
	for _, r := range storedRisks(t, db, tenant) {
		tr := ""
		if r.Treatment != nil {
			tr = *r.Treatment
		}
		out[fmt.Sprint(r.Status, tr, zero(r.Likelihood), zero(r.Impact), zero(r.ResidualLikelihood), zero(r.ResidualImpact))]++
	}
	return out
}

// TestHeatCountsUnderConcurrentWrites: after goroutines create, change (likelihood,
// impact, status, treatment, residual assessment), delete and import one tenant's
// risks at once, the counts of every status, treatment and cell equal a count by
// hand over the risks table, for both bases; another tenant's counts are
// untouched. The same with folds running beside the writes, and after a last fold.
func TestHeatCountsUnderConcurrentWrites(t *testing.T) {
	t.Parallel()
	for _, folding := range []bool{false, true} {
		t.Run(fmt.Sprintf("folding=%v", folding), func(t *testing.T) {
			t.Parallel()
			db := dbtest.Open(t)
			ctx := context.Background()
			busy, err := riskseed.Tenant(ctx, db.DB, "busy", 300)
			if err != nil {
				t.Fatal(err)
			}
			quiet, err := riskseed.Tenant(ctx, db.DB, "quiet", 200)
			if err != nil {
				t.Fatal(err)
			}
			s := riskstore.New(db.DB, &changeLog{})
			svc := &risks.Service{Store: s, Tx: database.NewRunner(db.DB)}
			quietBefore := heatKeys(t, db, quiet)
			if diff := cmp.Diff(handKeys(t, db, quiet), quietBefore); diff != "" {
				t.Fatalf("seeded counts (-by hand +counts):\n%s", diff)
			}
			var seeded []string
			if err := db.Table("risks").Where("tenant_id = ?", busy).Pluck("id", &seeded).Error; err != nil {
				t.Fatal(err)
			}

			const workers, ops = 8, 30
			var wg sync.WaitGroup
			var done atomic.Bool
			errs := make(chan error, workers+2)
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- writeRandomly(ctx, svc, busy, w, workers, ops, seeded)
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- importTwice(ctx, svc, busy)
			}()
			folded := 0
			var foldWG sync.WaitGroup
			if folding {
				foldWG.Add(1)
				go func() {
					defer foldWG.Done()
					for !done.Load() {
						n, err := s.FoldHeatCounts(ctx, 7)
						if err != nil {
							errs <- err
							return
						}
						folded += n
					}
				}()
			}
			wg.Wait()
			done.Store(true)
			foldWG.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if folding && dbtest.Postgres() && folded == 0 {
				t.Error("the folds beside the writes folded nothing: the test did not fold concurrently")
			}
			check := func(when string) {
				if diff := cmp.Diff(handKeys(t, db, busy), heatKeys(t, db, busy)); diff != "" {
					t.Errorf("%s: counts by key (-by hand +counts):\n%s", when, diff)
				}
				checkCounts(t, db, s, busy, when)
				if diff := cmp.Diff(quietBefore, heatKeys(t, db, quiet)); diff != "" {
					t.Errorf("%s: the other tenant's counts changed (-before +after):\n%s", when, diff)
				}
				checkCounts(t, db, s, quiet, when+", other tenant")
			}
			check("after the writes")
			for {
				n, err := s.FoldHeatCounts(ctx, 1000)
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					break
				}
			}
			var deltas int64
			if err := db.Table("risk_heat_counts").Where("NOT folded").Count(&deltas).Error; err != nil || deltas != 0 {
				t.Fatalf("after folding everything: %d deltas left (%v)", deltas, err)
			}
			check("after the last fold")
		})
	}
}

// writeRandomly is one writer of the concurrent test: ops creates, changes and
// deletions of tenant's risks. It deletes only its own risks and the seeded ones
// numbered w modulo workers, and skips a risk another writer deleted.
func writeRandomly(ctx context.Context, svc *risks.Service, tenant string, w, workers, ops int, seeded []string) error {
	rng := rand.New(rand.NewPCG(uint64(w), 7))
	pick := func(n int) *int { v := 1 + rng.IntN(n); return &v }
	var mine []string
	for i := range ops {
		switch op := rng.IntN(4); {
		case op == 0 || len(mine) == 0:
			f := risks.Fields{Title: str(fmt.Sprintf("w%d-%d", w, i)), Likelihood: pick(5), Impact: pick(5)}
			if rng.IntN(2) == 0 {
				tr := risks.Treatments[rng.IntN(4)]
				f.Treatment = &tr
				f.ResidualLikelihood, f.ResidualImpact = pick(5), pick(5)
			}
			r, err := risks.New(ids.New(ids.Risk), tenant, f, time.Now())
			if err != nil {
				return err
			}
			if err := svc.Create(ctx, r); err != nil {
				return err
			}
			mine = append(mine, r.ID)
		case op == 3:
			var id string
			if rng.IntN(2) == 0 {
				id, mine = mine[len(mine)-1], mine[:len(mine)-1]
			} else {
				k := w + workers*rng.IntN(len(seeded)/workers)
				id = seeded[k]
			}
			if err := svc.Delete(ctx, tenant, id, nil); err != nil && !errors.Is(err, risks.ErrNotFound) {
				return err
			}
		default:
			id := seeded[rng.IntN(len(seeded))]
			if op == 2 {
				id = mine[rng.IntN(len(mine))]
			}
			u := randomChange(rng)
			_, err := svc.Update(ctx, tenant, id, nil, func(r *risks.Risk) error { return r.Apply(u, time.Now()) })
			if err != nil && !errors.Is(err, risks.ErrNotFound) {
				return err
			}
		}
	}
	return nil
}

// randomChange changes some of the fields the counts key on, clearing some.
func randomChange(rng *rand.Rand) risks.Update {
	num := func() *risks.Nullable[int] {
		if rng.IntN(5) == 0 {
			return &risks.Nullable[int]{Null: true}
		}
		return &risks.Nullable[int]{Value: 1 + rng.IntN(5)}
	}
	var u risks.Update
	if rng.IntN(2) == 0 {
		u.Likelihood, u.Impact = num(), num()
	}
	if rng.IntN(2) == 0 {
		st := risks.Statuses[rng.IntN(3)]
		u.Status = &st
	}
	if rng.IntN(2) == 0 {
		u.Treatment = &risks.Nullable[risks.Treatment]{Value: risks.Treatments[rng.IntN(4)]}
		if rng.IntN(4) == 0 {
			u.Treatment = &risks.Nullable[risks.Treatment]{Null: true}
		}
	}
	if rng.IntN(2) == 0 {
		u.ResidualLikelihood, u.ResidualImpact = num(), num()
	}
	return u
}

// importTwice imports 40 new risks by external ID, then changes them all by a
// second import, each one unit of work.
func importTwice(ctx context.Context, svc *risks.Service, tenant string) error {
	for round := range 2 {
		var rows []risks.ImportRow
		for i := range 40 {
			ext := fmt.Sprintf("IMP-%d", i)
			l := risks.Nullable[int]{Value: 1 + (i+round)%5}
			st := risks.Statuses[(i+round)%3]
			rows = append(rows, risks.ImportRow{Row: i + 2, ExternalID: &ext, Change: risks.Update{
				Title: str("imported " + ext), Likelihood: &l, Impact: &risks.Nullable[int]{Value: 1 + i%5}, Status: &st,
				Treatment: &risks.Nullable[risks.Treatment]{Value: risks.Treatments[(i+round)%4]}}})
		}
		rep, err := svc.Import(ctx, tenant, risks.Rows(rows), false, func() string { return ids.New(ids.Risk) }, time.Now())
		if err != nil {
			return fmt.Errorf("import round %d: %w", round, err)
		}
		if rep.Created+rep.Updated != 40 {
			return fmt.Errorf("import round %d: %+v, want 40 written", round, rep)
		}
	}
	return nil
}

// TestRolledBackWriteLeavesCounts: a unit of work that creates, changes and
// deletes risks and then fails leaves the counts — and on PostgreSQL the rows of
// the table — as they were.
func TestRolledBackWriteLeavesCounts(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	ctx := context.Background()
	tenant, err := riskseed.Tenant(ctx, db.DB, "t", 50)
	if err != nil {
		t.Fatal(err)
	}
	s := riskstore.New(db.DB, &changeLog{})
	svc := &risks.Service{Store: s, Tx: database.NewRunner(db.DB)}
	var seeded []string
	if err := db.Table("risks").Where("tenant_id = ?", tenant).Order("id").Pluck("id", &seeded).Error; err != nil {
		t.Fatal(err)
	}
	before := heatKeys(t, db, tenant)
	var rowsBefore int64
	db.Table("risk_heat_counts").Count(&rowsBefore)
	boom := errors.New("fail after writing")
	err = svc.Tx.InTx(ctx, func(ctx context.Context) error {
		r, err := risks.New(ids.New(ids.Risk), tenant, risks.Fields{Title: str("new"), Likelihood: num(5), Impact: num(5)}, time.Now())
		if err != nil {
			return err
		}
		if err := svc.Create(ctx, r); err != nil {
			return err
		}
		closed := risks.StatusClosed
		if _, err := svc.Update(ctx, tenant, seeded[0], nil, func(r *risks.Risk) error {
			return r.Apply(risks.Update{Status: &closed, Likelihood: &risks.Nullable[int]{Value: 5}}, time.Now())
		}); err != nil {
			return err
		}
		if err := svc.Delete(ctx, tenant, seeded[1], nil); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("unit of work: %v, want the failure", err)
	}
	if diff := cmp.Diff(before, heatKeys(t, db, tenant)); diff != "" {
		t.Errorf("after the rollback (-before +after):\n%s", diff)
	}
	var rowsAfter int64
	db.Table("risk_heat_counts").Count(&rowsAfter)
	if rowsAfter != rowsBefore {
		t.Errorf("the table holds %d rows after the rollback, %d before", rowsAfter, rowsBefore)
	}
	checkCounts(t, db, s, tenant, "after the rollback")
}

// TestHeatmapScansForOtherFilters: a heat map with a filter the counts do not hold
// (category, owner, score bounds, review date, creation dates, q, metadata) counts
// the selected risks themselves: right even with the tenant's counts wiped, while a
// heat map the counts answer then shows they are what it read.
func TestHeatmapScansForOtherFilters(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	ctx := context.Background()
	tenant, err := riskseed.Tenant(ctx, db.DB, "t", 400)
	if err != nil {
		t.Fatal(err)
	}
	s := riskstore.New(db.DB, &changeLog{})
	if err := db.Exec("DELETE FROM risk_heat_counts WHERE tenant_id = ?", tenant).Error; err != nil {
		t.Fatal(err)
	}
	rows := storedRisks(t, db, tenant)
	ten, six := 10, 6
	category, owner, before := "vendor", "owner3@example.com", "2025-03-01"
	since := riskseed.Base.Add(100 * time.Second)
	open := []risks.Status{risks.StatusOpen}
	cases := []struct {
		name string
		q    risks.Query
		keep func(stored) bool
	}{
		{"category", risks.Query{Category: &category}, func(r stored) bool { return r.Category == category }},
		{"owner and status", risks.Query{Owner: &owner, Statuses: open},
			func(r stored) bool { return r.Owner == owner && r.Status == "open" }},
		{"minScore", risks.Query{MinScore: &ten}, func(r stored) bool { return r.RiskScore != nil && *r.RiskScore >= ten }},
		{"maxScore", risks.Query{MaxScore: &six}, func(r stored) bool { return r.RiskScore != nil && *r.RiskScore <= six }},
		{"reviewBefore", risks.Query{ReviewBefore: &before},
			func(r stored) bool { return r.ReviewDate != nil && *r.ReviewDate < before }},
		{"createdSince", risks.Query{CreatedSince: &since}, nil}, // rows 100 on
		{"q", risks.Query{Words: []string{"VENDOR"}},
			func(r stored) bool { return strings.Contains(strings.ToLower(r.Title+" "+r.Description), "vendor") }},
		{"metadata", risks.Query{Metadata: map[string]string{"unit": "u10"}}, func(r stored) bool {
			var m map[string]string
			return json.Unmarshal([]byte(r.Metadata), &m) == nil && m["unit"] == "u10"
		}},
	}
	for _, c := range cases {
		if riskstore.Countable(c.q) {
			t.Fatalf("%s: the counts cannot answer it", c.name)
		}
		want := 0
		for _, basis := range []risks.Basis{risks.BasisInherent, risks.BasisResidual} {
			keep := c.keep
			if keep == nil {
				var created []stored
				db.Table("risks").Where("tenant_id = ? AND created_at >= ?", tenant, since).Find(&created)
				rows, keep = created, func(stored) bool { return true }
			} else {
				rows = storedRisks(t, db, tenant)
			}
			h := byHand(rows, basis, keep)
			got, err := s.Heatmap(ctx, tenant, c.q, basis)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(h, *got); diff != "" {
				t.Errorf("%s %s (-by hand +heat map):\n%s", c.name, basis, diff)
			}
			want += h.Unassessed
			for _, row := range h.Counts {
				for _, n := range row {
					want += n
				}
			}
		}
		if want == 0 {
			t.Errorf("%s selects no risk: the case tests nothing", c.name)
		}
	}
	got, err := s.Heatmap(ctx, tenant, risks.Query{Statuses: open}, risks.BasisInherent)
	if err != nil {
		t.Fatal(err)
	}
	if *got != (risks.Heatmap{}) {
		t.Errorf("a heat map by status alone, counts wiped: %+v; want it read from the (empty) counts", got)
	}
}

// TestCountableFilters: the counts answer a heat map whose only filters are
// statuses, treatments and factors; any other field of risks.Query, including one added
// later, sends it to the scan.
func TestCountableFilters(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeFor[risks.Query]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		var q risks.Query
		v := reflect.ValueOf(&q).Elem().Field(i)
		switch v.Kind() {
		case reflect.Pointer:
			v.Set(reflect.New(f.Type.Elem()))
		case reflect.Slice:
			v.Set(reflect.MakeSlice(f.Type, 1, 1))
		case reflect.Map:
			v.Set(reflect.MakeMap(f.Type))
			v.SetMapIndex(reflect.New(f.Type.Key()).Elem(), reflect.New(f.Type.Elem()).Elem())
		case reflect.Struct:
			if f.Type != reflect.TypeFor[risks.Sort]() {
				t.Fatalf("field %s of type %s: teach this test to set it", f.Name, f.Type)
			}
			v.Set(reflect.ValueOf(risks.Sort{Field: risks.SortTitle, Desc: true}))
		default:
			t.Fatalf("field %s of kind %s: teach this test to set it", f.Name, v.Kind())
		}
		want := f.Name == "Statuses" || f.Name == "Treatments" || f.Name == "Sort" || f.Name == "Likelihoods" ||
			f.Name == "Impacts" || f.Name == "ResidualLikelihoods" || f.Name == "ResidualImpacts"
		if got := riskstore.Countable(q); got != want {
			t.Errorf("with %s set, Countable = %v, want %v", f.Name, got, want)
		}
	}
}
