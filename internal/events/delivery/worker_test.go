package delivery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/audit"
	"github.com/riskapi/riskapi/internal/audit/auditstore"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/events"
	"github.com/riskapi/riskapi/internal/events/delivery"
	"github.com/riskapi/riskapi/internal/events/eventstore"
	"github.com/riskapi/riskapi/internal/events/webhooktest"
)

const tenant = "ten_0193b2c4d5e67f8091a2b3c4d5e6f708"

// fixture is a migrated store with an emitter and endpoint management over it.
type fixture struct {
	db        *database.DB
	store     *eventstore.Store
	emitter   *events.Emitter
	endpoints *events.Endpoints
}

// retryFor is the delivery retry window of the fixtures: WEBHOOK_RETRY_FOR's default.
var retryFor = config.Default().Outbound.RetryFor

func newFixture(t *testing.T, guard *delivery.Guard) *fixture {
	t.Helper()
	db := dbtest.Open(t)
	st, err := eventstore.New(db, bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	st.Recording(audit.Recorder{Store: auditstore.New(db.DB)})
	return &fixture{db: db, store: st, emitter: &events.Emitter{Store: st, RetryFor: retryFor},
		endpoints: &events.Endpoints{Store: st, Events: st, Guard: guard, RetryFor: retryFor, Max: 16}}
}

// emit commits one event of typ in its own transaction.
func (f *fixture) emit(t *testing.T, typ events.Type, obj any) *events.Event {
	t.Helper()
	var ev *events.Event
	err := database.RunInTx(context.Background(), f.db.DB, func(ctx context.Context) error {
		var err error
		ev, err = f.emitter.Emit(ctx, tenant, typ, obj)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func (f *fixture) endpoint(t *testing.T, u string, types ...string) *events.Endpoint {
	t.Helper()
	e, err := f.endpoints.Create(context.Background(), tenant, u, types, "")
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// run starts a worker over the fixture's store and stops it when t ends.
func (f *fixture) run(t *testing.T, w *delivery.Worker) *delivery.Worker {
	t.Helper()
	if w.Store == nil {
		w.Store = f.store
	}
	if w.Sender == nil {
		w.Sender = delivery.NewSender(&delivery.Guard{AllowPrivate: true}, nil)
	}
	if w.Poll == 0 {
		w.Poll = 20 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

var allowAll = &delivery.Guard{AllowPrivate: true}

// TestEmitNeedsTheChangesTransaction: an event written outside a transaction could
// outlive a rolled-back change; Emit refuses, and a rolled-back transaction takes
// its event and queued deliveries with it.
func TestEmitNeedsTheChangesTransaction(t *testing.T) {
	t.Parallel()
	f := newFixture(t, allowAll)
	f.endpoint(t, "http://127.0.0.1:9/hook")
	if _, err := f.emitter.Emit(context.Background(), tenant, events.RiskCreated, map[string]string{}); !errors.Is(err, events.ErrNoUnitOfWork) {
		t.Fatalf("Emit outside a transaction: %v, want ErrNoUnitOfWork", err)
	}
	boom := errors.New("the change failed")
	err := database.RunInTx(context.Background(), f.db.DB, func(ctx context.Context) error {
		if _, err := f.emitter.Emit(ctx, tenant, events.RiskCreated, map[string]string{"id": "risk_x"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	evs, _, err := f.store.List(context.Background(), tenant, events.Filter{Limit: 10})
	if err != nil || len(evs) != 0 {
		t.Fatalf("after rollback: %d events (%v), want none", len(evs), err)
	}
	jobs, err := f.store.Claim(context.Background(), time.Now().Add(time.Hour), time.Minute, 10, nil)
	if err != nil || len(jobs) != 0 {
		t.Fatalf("after rollback: %d deliveries queued (%v), want none", len(jobs), err)
	}
}

// TestDeliverySignedAndVerifiedIndependently: every delivery carries the event as
// emitted, with Standard Webhooks headers that the reference Node.js library accepts
// with the endpoint's secret; endpoints get only the types they subscribed to.
func TestDeliverySignedAndVerifiedIndependently(t *testing.T) {
	t.Parallel()
	f := newFixture(t, allowAll)
	all, onlyDeleted := webhooktest.NewReceiver(t), webhooktest.NewReceiver(t)
	epAll := f.endpoint(t, all.URL()+"/hook")
	epDel := f.endpoint(t, onlyDeleted.URL()+"/hook", "risk.deleted")
	f.run(t, &delivery.Worker{})
	created := f.emit(t, events.RiskCreated, map[string]any{"id": "risk_1", "title": "Vendor ✓ \"DPA\""})
	deleted := f.emit(t, events.RiskDeleted, map[string]any{"id": "risk_1"})

	all.WaitIDs(t, 2, 10*time.Second)
	onlyDeleted.WaitIDs(t, 1, 10*time.Second)
	time.Sleep(100 * time.Millisecond) // a wrongly queued delivery would arrive by now
	if ids := onlyDeleted.IDs(); len(ids) != 1 || ids[deleted.ID] != 1 {
		t.Fatalf("risk.deleted-only endpoint got %v, want only %s", ids, deleted.ID)
	}
	for _, d := range all.Deliveries() {
		want := created
		if d.ID() == deleted.ID {
			want = deleted
		}
		if string(d.Body) != string(want.Payload) {
			t.Errorf("body %s, want the event as emitted %s", d.Body, want.Payload)
		}
		if ct := d.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		if !strings.HasPrefix(d.Header.Get("webhook-signature"), "v1,") || d.Header.Get("webhook-timestamp") == "" {
			t.Errorf("headers %v", d.Header)
		}
	}
	var env struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Data struct {
			Object map[string]any `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(created.Payload, &env); err != nil || env.ID != created.ID || env.Type != "risk.created" ||
		env.Data.Object["title"] != "Vendor ✓ \"DPA\"" {
		t.Fatalf("payload %s: %v", created.Payload, err)
	}
	webhooktest.VerifyWithNode(t, epAll.Secret, all.Deliveries())
	webhooktest.VerifyWithNode(t, epDel.Secret, onlyDeleted.Deliveries())
	// The check itself can fail: another endpoint's secret, or one changed byte.
	if webhooktest.NodeVerify(epDel.Secret, all.Deliveries()) == nil {
		t.Fatal("deliveries verified with another endpoint's secret")
	}
	tampered := all.Deliveries()[0]
	tampered.Body = []byte(strings.Replace(string(tampered.Body), "risk_1", "risk_2", 1))
	if webhooktest.NodeVerify(epAll.Secret, []webhooktest.Delivery{tampered}) == nil {
		t.Fatal("a tampered body verified")
	}
}

// TestRetriesKeepTheWebhookID: an endpoint failing its first attempts gets the event
// again after a backoff, with the same webhook-id every time, until it answers 2xx;
// the delivery log shows each attempt.
func TestRetriesKeepTheWebhookID(t *testing.T) {
	t.Parallel()
	f := newFixture(t, allowAll)
	rcv := webhooktest.NewReceiver(t)
	rcv.Answer(func(n int, _ webhooktest.Delivery) int {
		if n < 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	ep := f.endpoint(t, rcv.URL())
	f.run(t, &delivery.Worker{Backoff: delivery.Backoff{Base: 50 * time.Millisecond, Max: 200 * time.Millisecond}})
	ev := f.emit(t, events.RiskUpdated, map[string]any{"id": "risk_2"})

	waitFor(t, func() bool { return len(rcv.Deliveries()) >= 3 })
	for i, d := range rcv.Deliveries() {
		if d.ID() != ev.ID {
			t.Fatalf("delivery %d has webhook-id %q, want the event id %s", i, d.ID(), ev.ID)
		}
	}
	webhooktest.VerifyWithNode(t, ep.Secret, rcv.Deliveries())
	log := f.waitLog(t, ep.ID, 3)
	for i, a := range log { // newest first
		n := 3 - i
		wantStatus, delivered := http.StatusServiceUnavailable, false
		if n == 3 {
			wantStatus, delivered = http.StatusOK, true
		}
		if a.N != n || a.StatusCode != wantStatus || a.Delivered() != delivered || a.EventID != ev.ID {
			t.Errorf("log entry %d: %+v, want attempt %d status %d delivered %v", i, a, n, wantStatus, delivered)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(rcv.Deliveries()); n != 3 {
		t.Fatalf("%d deliveries after the 2xx, want no more than 3", n)
	}
}

// TestReceiverDownGetsEverythingOnceBack: events emitted while the receiver is down
// are retried on the backoff schedule and all arrive once it listens again.
func TestReceiverDownGetsEverythingOnceBack(t *testing.T) {
	t.Parallel()
	f := newFixture(t, allowAll)
	rcv := webhooktest.NewReceiver(t)
	ep := f.endpoint(t, rcv.URL())
	rcv.Down()
	f.run(t, &delivery.Worker{Backoff: delivery.Backoff{Base: 50 * time.Millisecond, Max: 300 * time.Millisecond}})
	const n = 20
	want := map[string]bool{}
	for i := 0; i < n; i++ {
		want[f.emit(t, events.RiskCreated, map[string]any{"n": i}).ID] = true
	}
	// Down long enough for several failed attempts per event.
	waitFor(t, func() bool {
		as, _, _ := f.store.Attempts(context.Background(), tenant, ep.ID, events.AttemptFilter{Limit: 100})
		return len(as) >= 2*n
	})
	rcv.Up(t)
	ids := rcv.WaitIDs(t, n, 20*time.Second)
	for id := range ids {
		if !want[id] {
			t.Fatalf("unexpected webhook-id %s", id)
		}
	}
	as, _, _ := f.store.Attempts(context.Background(), tenant, ep.ID, events.AttemptFilter{Limit: 1})
	if as[0].Error != "" && !as[0].Delivered() {
		t.Logf("newest log entry: %+v", as[0])
	}
	failed, _, _ := f.store.Attempts(context.Background(), tenant, ep.ID, events.AttemptFilter{Limit: 100})
	if last := failed[len(failed)-1]; last.Error != "connection refused" || last.StatusCode != 0 {
		t.Fatalf("first attempt logged as %+v, want connection refused without a status", last)
	}
	webhooktest.VerifyWithNode(t, ep.Secret, rcv.Deliveries())
}

// TestGivesUpAfterRetryWindow: a delivery still failing when WEBHOOK_RETRY_FOR has
// passed is given up, not retried forever.
func TestGivesUpAfterRetryWindow(t *testing.T) {
	t.Parallel()
	f := newFixture(t, allowAll)
	const window = 1500 * time.Millisecond
	f.emitter.RetryFor = window
	rcv := webhooktest.NewReceiver(t)
	rcv.Answer(func(int, webhooktest.Delivery) int { return http.StatusInternalServerError })
	ep := f.endpoint(t, rcv.URL())
	f.run(t, &delivery.Worker{Backoff: delivery.Backoff{Base: 40 * time.Millisecond, Max: 80 * time.Millisecond}})
	ev := f.emit(t, events.RiskCreated, map[string]any{})
	f.waitLog(t, ep.ID, 2) // retried within the window
	// Past the window (plus the longest wait and an attempt's worth of slack), the
	// log stops growing.
	time.Sleep(time.Until(ev.CreatedAt.Add(window + time.Second)))
	n := len(rcv.Deliveries())
	time.Sleep(500 * time.Millisecond)
	if m := len(rcv.Deliveries()); m != n {
		t.Fatalf("attempts went on after the retry window: %d, then %d", n, m)
	}
}

// TestPerEndpointBound: a slow endpoint never has more attempts in flight than the
// bound, however many events are due, and still gets every one.
func TestPerEndpointBound(t *testing.T) {
	t.Parallel()
	f := newFixture(t, allowAll)
	rcv := webhooktest.NewReceiver(t)
	rcv.Delay(100 * time.Millisecond)
	f.endpoint(t, rcv.URL())
	const n = 12
	for i := 0; i < n; i++ {
		f.emit(t, events.RiskCreated, map[string]any{"n": i})
	}
	f.run(t, &delivery.Worker{PerEndpoint: 2, Concurrency: 8})
	rcv.WaitIDs(t, n, 20*time.Second)
	if m := rcv.MaxConcurrent(); m > 2 || m < 1 {
		t.Fatalf("%d deliveries in flight at once to one endpoint, want at most 2", m)
	}
}

// TestExpiredClaimIsResumed: a delivery claimed by a worker that then died (it never
// settles) falls due when its lease ends, and another worker delivers it; the dead
// claim's late result is refused by the fencing token.
func TestExpiredClaimIsResumed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, allowAll)
	rcv := webhooktest.NewReceiver(t)
	f.endpoint(t, rcv.URL())
	ev := f.emit(t, events.RiskCreated, map[string]any{})
	ctx := context.Background()
	dead, err := f.store.Claim(ctx, time.Now(), 300*time.Millisecond, 10, nil)
	if err != nil || len(dead) != 1 {
		t.Fatalf("claim: %v %v", dead, err)
	}
	if again, _ := f.store.Claim(ctx, time.Now(), time.Second, 10, nil); len(again) != 0 {
		t.Fatal("a leased delivery was claimed twice")
	}
	f.run(t, &delivery.Worker{})
	rcv.WaitIDs(t, 1, 10*time.Second)
	if ids := rcv.IDs(); ids[ev.ID] != 1 {
		t.Fatalf("deliveries %v", ids)
	}
	held, err := f.store.Settle(ctx, []delivery.Settlement{{Job: dead[0], Result: &delivery.Result{Delivered: true,
		Attempt: events.Attempt{N: 1, StatusCode: 200, CreatedAt: time.Now()}}}})
	if err != nil || held[0] {
		t.Fatalf("settling an expired claim: held %v (%v), want refused by its token", held, err)
	}
}

// TestConcurrentWorkersSendEachOnce: several workers on one store (instances) claim
// disjoint deliveries: no event is being sent by two at once, and all arrive.
func TestConcurrentWorkersSendEachOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, allowAll)
	rcv := webhooktest.NewReceiver(t)
	rcv.Delay(5 * time.Millisecond)
	f.endpoint(t, rcv.URL())
	const n = 60
	for i := 0; i < n; i++ {
		f.emit(t, events.RiskCreated, map[string]any{"n": i})
	}
	for i := 0; i < 3; i++ {
		f.run(t, &delivery.Worker{Concurrency: 4})
	}
	ids := rcv.WaitIDs(t, n, 30*time.Second)
	time.Sleep(200 * time.Millisecond)
	for id, c := range rcv.IDs() {
		if c != 1 {
			t.Errorf("%s delivered %d times by concurrent workers, want once", id, c)
		}
	}
	if len(ids) != n {
		t.Fatalf("%d distinct events, want %d", len(ids), n)
	}
}

// rebinding resolves a name to a public address once (when the endpoint is saved)
// and to loopback afterwards: DNS rebinding.
type rebinding struct {
	mu    sync.Mutex
	calls int
}

func (r *rebinding) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.calls == 1 {
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
	}
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// TestSSRFGuard: without WEBHOOK_ALLOW_PRIVATE, internal addresses are refused when
// an endpoint is saved (400 naming url), and a name that resolves to one only when
// the delivery connects (DNS rebinding) is refused at connect time: nothing reaches
// the receiver on loopback, and the log says why.
func TestSSRFGuard(t *testing.T) {
	t.Parallel()
	strict := &delivery.Guard{}
	for _, u := range []string{"http://127.0.0.1:8080/x", "http://localhost/x", "https://10.1.2.3/x",
		"http://169.254.169.254/latest/meta-data", "http://[::1]/x", "http://100.64.0.1/x", "http://0.0.0.0/x",
		"http://[::ffff:127.0.0.1]/x", "http://192.168.1.1/x"} {
		pu, _ := url.Parse(u)
		if err := strict.CheckURL(context.Background(), pu); err == nil {
			t.Errorf("%s accepted at save time", u)
		}
	}
	f := newFixture(t, &delivery.Guard{Resolver: &rebinding{}})
	if _, err := f.endpoints.Create(context.Background(), tenant, "http://127.0.0.1:9/x", nil, ""); err == nil ||
		!strings.Contains(err.Error(), "url") {
		t.Fatalf("loopback endpoint: %v, want VALIDATION_FAILED naming url", err)
	}
	rcv := webhooktest.NewReceiver(t)
	port := rcv.URL()[strings.LastIndex(rcv.URL(), ":")+1:]
	ep := f.endpoint(t, "http://rebind.test:"+port+"/hook")
	res := &rebinding{calls: 1} // the connect-time lookups answer loopback
	f.run(t, &delivery.Worker{Sender: delivery.NewSender(&delivery.Guard{Resolver: res}, nil),
		Backoff: delivery.Backoff{Base: time.Hour}})
	f.emit(t, events.RiskCreated, map[string]any{})
	log := f.waitLog(t, ep.ID, 1)
	if !strings.HasPrefix(log[0].Error, "refused:") || log[0].StatusCode != 0 {
		t.Fatalf("attempt %+v, want refused at connect time", log[0])
	}
	if n := len(rcv.Deliveries()); n != 0 {
		t.Fatalf("the receiver on loopback got %d requests", n)
	}
}

// TestRedirectsNotFollowed: a 3xx is a failed attempt; its Location is never
// requested.
func TestRedirectsNotFollowed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, allowAll)
	target := webhooktest.NewReceiver(t)
	redirector := httptest.NewServer(http.RedirectHandler(target.URL()+"/elsewhere", http.StatusTemporaryRedirect))
	t.Cleanup(redirector.Close)
	ep := f.endpoint(t, redirector.URL)
	f.run(t, &delivery.Worker{Backoff: delivery.Backoff{Base: time.Hour}})
	f.emit(t, events.RiskCreated, map[string]any{})
	log := f.waitLog(t, ep.ID, 1)
	if log[0].StatusCode != http.StatusTemporaryRedirect || log[0].Delivered() {
		t.Fatalf("attempt %+v, want a failed 307", log[0])
	}
	if n := len(target.Deliveries()); n != 0 {
		t.Fatal("redirect followed")
	}
}

// waitLog waits until the endpoint's delivery log has at least n entries and
// returns them, newest first.
func (f *fixture) waitLog(t *testing.T, endpointID string, n int) []*events.Attempt {
	t.Helper()
	var log []*events.Attempt
	waitFor(t, func() bool {
		log, _, _ = f.store.Attempts(context.Background(), tenant, endpointID, events.AttemptFilter{Limit: 100})
		return len(log) >= n
	})
	return log
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 15s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestClaimQueuesWithSQLiteWriters: a claim is a write, and on SQLite it waits its
// turn at the write gate like every other writer instead of polling the busy handler
// against the writer holding the lock: with a busy timeout far shorter than that
// writer's transaction, the claim still gets its delivery, after it.
func TestClaimQueuesWithSQLiteWriters(t *testing.T) {
	if dbtest.Postgres() {
		t.Skip("PostgreSQL claims rows with SKIP LOCKED; only SQLite has one writer")
	}
	t.Parallel()
	ctx := context.Background()
	db, err := database.Open(ctx, dbtest.URL(t), database.Options{BusyTimeout: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err := eventstore.New(db, bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	st.Recording(audit.Recorder{Store: auditstore.New(db.DB)})
	f := &fixture{db: db, store: st, emitter: &events.Emitter{Store: st, RetryFor: retryFor},
		endpoints: &events.Endpoints{Store: st, Events: st, Guard: allowAll, RetryFor: retryFor, Max: 16}}
	f.endpoint(t, "http://127.0.0.1:9/hook")
	f.emit(t, events.RiskCreated, map[string]any{})

	holding := make(chan struct{})
	writerDone := make(chan error, 1)
	go func() {
		writerDone <- database.RunInTx(ctx, db.DB, func(context.Context) error {
			close(holding)
			time.Sleep(200 * time.Millisecond) // a slow writer holding SQLite's lock
			return nil
		})
	}()
	<-holding
	jobs, err := st.Claim(ctx, time.Now(), time.Minute, 10, nil)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim behind a writer: %d jobs, %v; want the one delivery", len(jobs), err)
	}
	if err := <-writerDone; err != nil {
		t.Fatal(err)
	}
}
