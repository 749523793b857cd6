package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riskapi/riskapi/internal/e2e"
)

// kind is a kind of request.
type kind string

const (
	kindUnkeyed kind = "unkeyed" // POST /v2/risks without Idempotency-Key
	kindKeyed   kind = "keyed"   // POST /v2/risks with a new key: first execution
	kindReplay  kind = "replay"  // the same POST again: the stored answer
	kindRead    kind = "read"    // GET /v2/risks/{id}
)

var allKinds = []kind{kindUnkeyed, kindKeyed, kindReplay, kindRead}

func (k kind) valid() bool {
	for _, a := range allKinds {
		if k == a {
			return true
		}
	}
	return false
}

// keyedWrite is one first execution, kept for replays and reads.
type keyedWrite struct {
	key  string
	body []byte // request
	resp []byte // the 201 body
	id   string
}

// generator runs the phases.
type generator struct {
	o      *options
	env    *environment
	client *e2e.Client
	log    io.Writer
	run_   string // unique per run: titles and keys carry it

	mu     sync.Mutex
	keyed  []keyedWrite
	warmed []keyedWrite // the warm-up's keyed writes, checked by verify too
	seq    atomic.Int64 // numbers titles and keys across phases
	before int          // the tenant's risks before the run (verify)
}

// kindResult aggregates one kind over every round.
type kindResult struct {
	ok, errors int
	elapsed    time.Duration // wall time of its phases
	lat        []time.Duration
	examples   []string      // first few errors
	mismatches int           // replay: not a replay or another body; read: another risk
	serverCPU  time.Duration // CPU the spawned instances used during its phases
	dbCPU      time.Duration // CPU the PostgreSQL backends of the run's database used during them
	dbKnown    bool          // dbCPU was measured (PostgreSQL, --spawn, psql at hand)
}

// cpuPerRequest is the spawned instances' CPU per answered request, 0 if unknown.
func (r *kindResult) cpuPerRequest() time.Duration {
	if r.ok == 0 {
		return 0
	}
	return r.serverCPU / time.Duration(r.ok)
}

// dbCPUPerRequest is the database backends' CPU per answered request, 0 if unknown.
func (r *kindResult) dbCPUPerRequest() time.Duration {
	if r.ok == 0 || !r.dbKnown {
		return 0
	}
	return r.dbCPU / time.Duration(r.ok)
}

func (r *kindResult) throughput() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.ok) / r.elapsed.Seconds()
}

// results are the whole run's.
type results struct {
	kinds     map[kind]*kindResult
	warmup    int // writes made by the warm-up
	started   time.Time
	took      time.Duration
	stopped   string // why the run ended early, if it did
	verified  bool
	risks     int      // the tenant's risks after the run
	expected  int      // … and how many the run accounts for
	doubled   []string // titles of this run held more than once
	lost      []string // acknowledged risks missing
	verifyErr error
	floor     *floor // pgbench's floor, with --pgbench
	loadStart string // /proc/loadavg's 1-, 5- and 15-minute averages when the run began
	race      *raceResult
}

func (r *results) ok() bool {
	for _, k := range r.kinds {
		if k.errors > 0 || k.mismatches > 0 {
			return false
		}
	}
	if r.race != nil && !r.race.ok() {
		return false
	}
	return r.verifyErr == nil && len(r.doubled) == 0 && len(r.lost) == 0 && (!r.verified || r.risks == r.expected)
}

func newGenerator(o *options, env *environment, log io.Writer) *generator {
	b := make([]byte, 4)
	rand.Read(b)
	return &generator{o: o, env: env, log: log, run_: "lg-" + hex.EncodeToString(b),
		client: &e2e.Client{APIKey: env.apiKey, Timeout: o.timeout,
			HTTP: e2e.NewClient(env.apiKey, o.clients).HTTP}}
}

func (g *generator) run(ctx context.Context) (*results, error) {
	res := &results{kinds: map[kind]*kindResult{}, started: time.Now(), loadStart: loadAvg()}
	for _, k := range g.o.kinds {
		res.kinds[k] = &kindResult{}
	}
	defer g.client.Close()
	if g.o.pgbench != "" {
		url := g.o.pgbenchURL
		if url == "" {
			url = g.o.databaseURL
		}
		res.floor = &floor{dir: g.o.pgbench, url: url, clients: g.o.clients,
			slice: g.o.pgbenchTime, log: g.log, tps: map[string][]float64{}}
		if err := res.floor.setUp(ctx); err != nil {
			return nil, err
		}
		defer func() {
			if err := res.floor.tearDown(context.WithoutCancel(ctx)); err != nil {
				fmt.Fprintf(g.log, "loadgen: %v\n", err)
			}
		}()
	}
	if g.o.verify {
		rs, err := g.client.ListRisks(ctx, g.env.targets[0], 1<<20)
		if err != nil {
			return nil, fmt.Errorf("list the tenant's risks before the run: %w", err)
		}
		g.before = len(rs)
	}
	if g.o.warmup > 0 {
		fmt.Fprintf(g.log, "loadgen: warm-up: %d unkeyed and %d keyed writes\n", g.o.warmup, g.o.warmup)
		for _, k := range []kind{kindUnkeyed, kindKeyed} {
			w := &kindResult{}
			g.phase(ctx, k, "warm-up", g.o.warmup, w)
			res.warmup += w.ok
			if w.errors > 0 {
				return nil, fmt.Errorf("warm-up %s: %d errors, e.g. %v", k, w.errors, w.examples)
			}
		}
		g.mu.Lock()
		g.warmed, g.keyed = g.keyed, nil // replays and reads use measured keys only
		g.mu.Unlock()
	}
	for round := 1; round <= g.o.rounds && ctx.Err() == nil; round++ {
		for _, k := range g.o.kinds {
			if ctx.Err() != nil {
				break
			}
			g.phase(ctx, k, fmt.Sprintf("round %d/%d", round, g.o.rounds), g.o.requests, res.kinds[k])
		}
		if res.floor != nil && ctx.Err() == nil {
			if err := res.floor.round(ctx); err != nil {
				return nil, err
			}
		}
	}
	res.took = time.Since(res.started)
	if ctx.Err() != nil {
		res.stopped = "interrupted"
	}
	if g.o.verify {
		g.verify(context.WithoutCancel(ctx), res)
	}
	if g.o.races > 0 && ctx.Err() == nil { // after verify, which does not count their risks
		res.race = g.races(ctx)
	}
	return res, nil
}

// clientResult is what one client of a phase saw.
type clientResult struct {
	lat        []time.Duration
	ok, errs   int
	mismatches int
	examples   []string
	keyed      []keyedWrite
}

// phase runs n requests of kind k from o.clients clients, or as many as start
// within o.duration, and adds them to into. Requests already sent when time is up
// finish normally.
func (g *generator) phase(ctx context.Context, k kind, label string, n int, into *kindResult) {
	g.mu.Lock()
	pool := append([]keyedWrite(nil), g.keyed...)
	g.mu.Unlock()
	if (k == kindReplay || k == kindRead) && len(pool) == 0 {
		return
	}
	deadline := time.Now().Add(g.o.duration)
	var next, done, failed atomic.Int64
	per := make([]clientResult, g.o.clients)
	cpu0, db0 := g.serverCPU(), g.snapshotDB(ctx)
	start := time.Now()
	stopProgress := g.progress(label, k, n, start, &done, &failed)
	var wg sync.WaitGroup
	for c := range g.o.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cr := &per[c]
			rng := mrand.New(mrand.NewPCG(uint64(c), uint64(start.UnixNano())))
			offset := rng.IntN(len(pool) + 1)
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil || time.Now().After(deadline) {
					return
				}
				target := g.env.targets[rng.IntN(len(g.env.targets))]
				var w keyedWrite
				if len(pool) > 0 {
					w = pool[(offset+i)%len(pool)]
				}
				a, good := g.request(ctx, k, target, w, cr)
				done.Add(1)
				if good {
					cr.ok++
					cr.lat = append(cr.lat, a.Latency)
				} else {
					cr.errs++
					failed.Add(1)
					if len(cr.examples) < 3 {
						cr.examples = append(cr.examples, fmt.Sprintf("%s via %s: %s", k, target, a))
					}
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	stopProgress()
	into.elapsed += elapsed
	into.serverCPU += g.serverCPU() - cpu0
	if db1 := g.snapshotDB(ctx); db0 != nil && db1 != nil {
		into.dbCPU += db1.since(db0)
		into.dbKnown = true
	}
	added := g.merge(per, into)
	s := e2e.Summarize(into.lat[len(into.lat)-added:])
	fmt.Fprintf(g.log, "loadgen: %s %-7s %6d ok %4d errors in %6.2fs = %8.1f req/s  p50 %s p99 %s\n", label, k,
		added, int(failed.Load()), elapsed.Seconds(), float64(added)/elapsed.Seconds(), ms(s.P50), ms(s.P99))
}

// request sends one request of kind k to target (replays and reads use w, a keyed
// write from an earlier phase) and reports whether it got the answer it should;
// what it learns (new keyed writes, mismatches) goes to cr.
func (g *generator) request(ctx context.Context, k kind, target string, w keyedWrite, cr *clientResult) (e2e.Answer, bool) {
	switch k {
	case kindUnkeyed:
		a := g.client.CreateRisk(ctx, target, "", g.body("u"))
		return a, a.Status == http.StatusCreated && a.Replayed == ""
	case kindKeyed:
		key := fmt.Sprintf("%s-%d", g.run_, g.seq.Add(1))
		body := g.body("k")
		a := g.client.CreateRisk(ctx, target, key, body)
		if a.Status != http.StatusCreated || a.Replayed != "false" {
			return a, false
		}
		id, err := e2e.RiskID(a.Body)
		if err != nil {
			return a, false
		}
		cr.keyed = append(cr.keyed, keyedWrite{key: key, body: body, resp: a.Body, id: id})
		return a, true
	case kindReplay:
		a := g.client.CreateRisk(ctx, target, w.key, w.body)
		good := a.Status == http.StatusCreated
		if good && (a.Replayed != "true" || !bytes.Equal(a.Body, w.resp)) {
			cr.mismatches++
			if len(cr.examples) < 3 {
				cr.examples = append(cr.examples, fmt.Sprintf("replay of %s: Idempotent-Replayed %q, body %.200s", w.key, a.Replayed, a.Body))
			}
		}
		return a, good
	default: // kindRead
		a := g.client.Do(ctx, http.MethodGet, target, "/v2/risks/"+w.id, "", nil)
		good := a.Status == http.StatusOK
		if good {
			if id, err := e2e.RiskID(a.Body); err != nil || id != w.id {
				cr.mismatches++
			}
		}
		return a, good
	}
}

// merge adds every client's results to into and their keyed writes to the pool of
// later phases, and returns how many requests succeeded.
func (g *generator) merge(per []clientResult, into *kindResult) int {
	added := 0
	for _, cr := range per {
		into.ok += cr.ok
		into.errors += cr.errs
		into.mismatches += cr.mismatches
		into.lat = append(into.lat, cr.lat...)
		for _, e := range cr.examples {
			if len(into.examples) < 5 {
				into.examples = append(into.examples, e)
			}
		}
		g.mu.Lock()
		g.keyed = append(g.keyed, cr.keyed...)
		g.mu.Unlock()
		added += cr.ok
	}
	return added
}

// progress prints a line every o.progress while a phase runs; the returned func
// stops it.
func (g *generator) progress(label string, k kind, n int, start time.Time, done, failed *atomic.Int64) func() {
	if g.o.progress <= 0 {
		return func() {}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(g.o.progress)
		defer t.Stop()
		last, lastAt := int64(0), start
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				d := done.Load()
				fmt.Fprintf(g.log, "loadgen: … %s %s: %d/%d requests, %.0f req/s over the last %s, %d errors, %s elapsed\n",
					label, k, d, n, float64(d-last)/now.Sub(lastAt).Seconds(), now.Sub(lastAt).Round(time.Second),
					failed.Load(), now.Sub(start).Round(time.Second))
				last, lastAt = d, now
			}
		}
	}()
	return func() { close(stop); wg.Wait() }
}

// body is a new risk with a title unique to the run.
func (g *generator) body(tag string) []byte {
	n := g.seq.Add(1)
	b, _ := json.Marshal(map[string]any{
		"title":       fmt.Sprintf("%s %s %d", g.run_, tag, n),
		"description": "Load test risk: the vendor's contract has no data processing agreement, so personal data may be processed without the safeguards the regulation requires.",
		"category":    "Third-Party", "likelihood": 1 + n%5, "impact": 1 + (n/5)%5,
		// A name owner, as the newest API version (a new tenant's) takes it.
		"owner": map[string]string{"name": "loadgen"},
	})
	return b
}

// verify lists the tenant's risks and compares them with the run's writes.
func (g *generator) verify(ctx context.Context, res *results) {
	rs, err := g.client.ListRisks(ctx, g.env.targets[0], 1<<20)
	if err != nil {
		res.verifyErr = err
		return
	}
	res.verified = true
	res.risks = len(rs)
	res.expected = g.before + res.warmup
	for _, k := range []kind{kindUnkeyed, kindKeyed} {
		if r := res.kinds[k]; r != nil {
			res.expected += r.ok
		}
	}
	titles := map[string]int{}
	ids := map[string]bool{}
	for _, r := range rs {
		titles[r.Title]++
		ids[r.ID] = true
	}
	for t, n := range titles {
		if n > 1 && len(t) > len(g.run_) && t[:len(g.run_)] == g.run_ {
			res.doubled = append(res.doubled, t)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, w := range append(g.warmed[:len(g.warmed):len(g.warmed)], g.keyed...) {
		if !ids[w.id] {
			res.lost = append(res.lost, w.id)
		}
	}
}

// serverCPU is the CPU time the spawned instances have used so far (zero with
// --targets, whose processes loadgen cannot see).
func (g *generator) serverCPU() time.Duration {
	var t time.Duration
	for _, in := range g.env.insts {
		if d, err := in.CPU(); err == nil {
			t += d
		}
	}
	return t
}

// loadAvg is /proc/loadavg's 1-, 5- and 15-minute load averages ("?" where there
// is none).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}
