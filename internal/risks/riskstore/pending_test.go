package riskstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apiversion"
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
	"github.com/riskapi/riskapi/internal/risks/riskstore"
)

// pendingEnv is a store on SQLite with every recorder a server has (audit log,
// events, a webhook endpoint of tenant a so deliveries are queued) and tenants a
// (3 risks already) and b.
type pendingEnv struct {
	db    *database.DB
	s     *riskstore.Store
	evs   *eventstore.Store
	audit *auditstore.Store
	svc   *risks.Service
	holds *database.Holds
	a, b  string
	ctx   context.Context
}

func newPendingEnv(t *testing.T) *pendingEnv {
	t.Helper()
	db := dbtest.Open(t)
	if db.Dialect == database.Postgres {
		t.Skip("PostgreSQL imports in one transaction: nothing is pending")
	}
	ctx := changes.WithActor(context.Background(), changes.Actor{Type: changes.ActorAPIKey, ID: "key_test"})
	evs, err := eventstore.New(db, bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	al := auditstore.New(db.DB)
	rec := changes.Recorders{audit.Recorder{Store: al}, events.Recorder{Emitter: &events.Emitter{Store: evs, RetryFor: time.Hour}}}
	evs.Recording(rec)
	s := riskstore.New(db.DB, rec)
	holds := database.NewHolds(db.DB)
	env := &pendingEnv{db: db, s: s, evs: evs, audit: al, holds: holds, ctx: ctx,
		svc: &risks.Service{Store: s, Tx: database.NewRunner(db.DB), Holds: holds}}
	if env.a, err = riskseed.Tenant(ctx, db.DB, "importer", 3); err != nil {
		t.Fatal(err)
	}
	if env.b, err = riskseed.Tenant(ctx, db.DB, "bystander", 0); err != nil {
		t.Fatal(err)
	}
	err = evs.CreateEndpoint(ctx, &events.Endpoint{ID: ids.New(ids.Endpoint), TenantID: env.a, URL: "https://hooks.example.com/in",
		Secret: "whsec_" + "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=", APIVersion: string(apiversion.V20270115), CreatedAt: time.Now().UTC().Truncate(time.Microsecond)})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// count is how many rows of table tenant has (where adds a condition).
func (env *pendingEnv) count(t *testing.T, table, tenant, where string) int64 {
	t.Helper()
	var n int64
	q := env.db.DB.Table(table).Where("tenant_id = ?", tenant)
	if where != "" {
		q = q.Where(where)
	}
	if err := q.Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// gatedFile is an import of n new risks ("P-<i>", each titled with "pendingword")
// whose writing pass stops before row at until gate is closed, and then fails with
// fail if set.
type gatedFile struct {
	n, at   int
	reached chan struct{}
	gate    chan struct{}
	fail    error
	calls   atomic.Int32
}

func newGatedFile(n, at int, fail error) *gatedFile {
	return &gatedFile{n: n, at: at, reached: make(chan struct{}), gate: make(chan struct{}), fail: fail}
}

func (g *gatedFile) source(fn func(risks.ImportRow) error) error {
	call := g.calls.Add(1)
	for i := range g.n {
		if call == 2 && i == g.at {
			close(g.reached)
			<-g.gate
			if g.fail != nil {
				return g.fail
			}
		}
		if err := fn(importRow(i)); err != nil {
			return err
		}
	}
	return nil
}

func importRow(i int) risks.ImportRow {
	ext := fmt.Sprintf("P-%d", i)
	return risks.ImportRow{Row: i + 2, ExternalID: &ext, Change: risks.Update{Title: str("pendingword " + ext),
		Likelihood: &risks.Nullable[int]{Value: 1 + i%5}, Impact: &risks.Nullable[int]{Value: 1 + i/5%5}}}
}

// seen is what tenant a's reads show of the register, its events and its audit log.
type seen struct {
	listed, matched, mapped, events, entries int
	byExternal                               bool
}

func (env *pendingEnv) look(t *testing.T) seen {
	t.Helper()
	var out seen
	page, _, err := env.s.List(env.ctx, env.a, risks.Filter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	out.listed = len(page)
	page, _, err = env.s.List(env.ctx, env.a, risks.Filter{Query: risks.Query{Words: []string{"pendingword"}}, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	out.matched = len(page)
	h, err := env.s.Heatmap(env.ctx, env.a, risks.Query{}, risks.BasisInherent)
	if err != nil {
		t.Fatal(err)
	}
	out.mapped = h.Unassessed
	for _, row := range h.Counts {
		for _, n := range row {
			out.mapped += n
		}
	}
	evs, _, err := env.evs.List(env.ctx, env.a, events.Filter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	out.events = len(evs)
	es, _, err := env.audit.List(env.ctx, env.a, audit.Filter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	out.entries = len(es)
	_, err = env.s.GetByExternalID(env.ctx, env.a, "P-0")
	out.byExternal = err == nil
	if err != nil && !errors.Is(err, risks.ErrNotFound) {
		t.Fatal(err)
	}
	return out
}

func (env *pendingEnv) importAll(g *gatedFile) <-chan error {
	done := make(chan error, 1)
	go func() {
		rep, err := env.svc.Import(env.ctx, env.a, g.source, false, func() string { return ids.New(ids.Risk) }, time.Now())
		if err == nil && rep.Created != g.n {
			err = fmt.Errorf("import %+v, want %d created", rep, g.n)
		}
		done <- err
	}()
	return done
}

// TestPendingImportIsHiddenAndLetsOthersWrite (SQLite): while an import of 1,200
// risks (3 transactions of 500) stops with 500 of them written, another tenant's
// create completes, and the importing tenant's list, search, heat map, look-up by
// external ID, events and audit log show none of them, nor does any delivery of
// their events get claimed; once it is published they all show.
func TestPendingImportIsHiddenAndLetsOthersWrite(t *testing.T) {
	t.Parallel()
	env := newPendingEnv(t)
	before := env.look(t)
	g := newGatedFile(1200, 700, nil)
	done := env.importAll(g)
	<-g.reached
	if n := env.count(t, "risks", env.a, "import_id IS NOT NULL"); n != 500 {
		t.Fatalf("%d of the import's risks committed before its gate, want 500", n)
	}
	l, i := 2, 3
	r, err := risks.New(ids.New(ids.Risk), env.b, risks.Fields{Title: str("B's own"), Likelihood: &l, Impact: &i}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := env.s.Create(env.ctx, r); err != nil { // would wait for the whole import in one transaction
		t.Fatal(err)
	}
	if got := env.look(t); got != before {
		t.Errorf("tenant a's reads during its import %+v, want what they were before %+v", got, before)
	}
	jobs, err := env.evs.Claim(env.ctx, time.Now().Add(time.Hour), time.Minute, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 0 {
		t.Errorf("%d deliveries of the pending import's events claimed, want none", len(jobs))
	}
	select {
	case err := <-done:
		t.Fatalf("the import ended (%v) while its writing pass was stopped", err)
	default:
	}
	close(g.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	after := env.look(t)
	if want := (seen{listed: 100, matched: 100, mapped: 1203, events: 100, entries: 100, byExternal: true}); after != want {
		t.Errorf("tenant a's reads after its import %+v, want %+v", after, want)
	}
	jobs, err = env.evs.Claim(env.ctx, time.Now().Add(time.Hour), time.Minute, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) == 0 {
		t.Error("no delivery of the published import's events claimed")
	}
}

// TestFailedImportIsTakenBack (SQLite): an import that fails with 500 of its
// 1,200 risks written leaves, once taken back, no risk, event, delivery or audit
// entry of it, and heat counts and search as before; meanwhile the tenant's next
// import is refused IMPORT_IN_PROGRESS or waits; once taken back the same file
// imports, each risk once.
func TestFailedImportIsTakenBack(t *testing.T) {
	t.Parallel()
	env := newPendingEnv(t)
	before := env.look(t)
	tables := []string{"risks", "events", "audit_log", "webhook_deliveries", "risk_heat_counts"}
	counts := map[string]int64{}
	for _, table := range tables {
		counts[table] = env.count(t, table, env.a, "")
	}
	g := newGatedFile(1200, 700, errors.New("the file went away"))
	done := env.importAll(g)
	<-g.reached
	close(g.gate)
	if err := <-done; err == nil || err.Error() != "the file went away" {
		t.Fatalf("import = %v, want the source's error", err)
	}
	for { // the take-back holds the tenant's import until it is done
		release, ok, err := env.holds.TryHold(env.ctx, "risks.import", env.a)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			release()
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := env.look(t); got != before {
		t.Errorf("tenant a's reads after the take-back %+v, want %+v", got, before)
	}
	for _, table := range tables {
		if n := env.count(t, table, env.a, ""); n != counts[table] && table != "risk_heat_counts" {
			t.Errorf("%d rows of %s after the take-back, want the %d before", n, table, counts[table])
		}
	}
	var heat, pending int64
	if err := env.db.DB.Raw(`SELECT COALESCE(SUM(n), 0) FROM risk_heat_counts WHERE tenant_id = ?`, env.a).Scan(&heat).Error; err != nil {
		t.Fatal(err)
	}
	if err := env.db.DB.Raw(`SELECT COUNT(*) FROM pending_imports`).Scan(&pending).Error; err != nil {
		t.Fatal(err)
	}
	if heat != 3 || pending != 0 {
		t.Errorf("heat counts sum to %d (want 3), %d imports pending (want 0)", heat, pending)
	}
	retry := newGatedFile(1200, -1, nil)
	if err := <-env.importAll(retry); err != nil {
		t.Fatal(err)
	}
	if n := env.count(t, "risks", env.a, ""); n != 1203 {
		t.Errorf("%d risks after the retry, want 1,203", n)
	}
}
