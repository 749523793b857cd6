package idempotency

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	dto "github.com/prometheus/client_model/go"

	"github.com/riskapi/riskapi/internal/problem"
)

// These tests pin the engine's state machine (docs/idempotency.md, "States") against
// a fake Store, independently of SQL; internal/idempotency/gormstore runs the same
// engine on real databases.

// fakeStore keeps committed records and locks in memory. A handler's writes are
// staged in its reservation's transaction and become visible only on Complete.
type fakeStore struct {
	mu      sync.Mutex
	records map[RecordKey]Record
	held    map[RecordKey]bool
	written []string // committed handler writes

	lookupErr, reserveErr, beginErr, completeErr, heldErr error
	reserves, releases, lookups, helds                    int
	// beforeReserve runs between Lookup and Reserve: what another attempt did meanwhile.
	beforeReserve func(*fakeStore)
}

func newFakeStore() *fakeStore {
	return &fakeStore{records: map[RecordKey]Record{}, held: map[RecordKey]bool{}}
}

func (s *fakeStore) Reserve(_ context.Context, k RecordKey) (Observation, error) {
	if f := s.beforeReserve; f != nil {
		f(s)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reserves++
	if s.reserveErr != nil {
		return Observation{}, s.reserveErr
	}
	var obs Observation
	if rec, ok := s.records[k]; ok {
		obs.Record = &rec
	}
	if !s.held[k] {
		s.held[k] = true
		obs.Held = &fakeReservation{s: s, k: k}
	}
	return obs, nil
}

func (s *fakeStore) Lookup(_ context.Context, k RecordKey) (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lookups++
	if s.lookupErr != nil {
		return nil, s.lookupErr
	}
	if rec, ok := s.records[k]; ok {
		return &rec, nil
	}
	return nil, nil
}

func (s *fakeStore) Held(_ context.Context, k RecordKey) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.helds++
	if s.heldErr != nil {
		return false, s.heldErr
	}
	return s.held[k], nil
}

func (s *fakeStore) MarkFailed(_ context.Context, rec *Record, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.records[rec.RecordKey]; ok && old.State == StateComplete && old.Live(now) {
		return nil
	}
	s.records[rec.RecordKey] = *rec
	return nil
}

func (s *fakeStore) DeleteExpired(context.Context, time.Time, int) (int, error) { return 0, nil }

func (s *fakeStore) record(k RecordKey) *Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec, ok := s.records[k]; ok {
		return &rec
	}
	return nil
}

type fakeTxKey struct{}

// fakeTx is a reservation's transaction: the writes it would commit.
type fakeTx struct{ writes []string }

type fakeReservation struct {
	s    *fakeStore
	k    RecordKey
	tx   *fakeTx
	done bool
}

func (r *fakeReservation) Begin(ctx context.Context) (context.Context, error) {
	if err := r.s.beginErr; err != nil {
		return nil, err
	}
	r.tx = &fakeTx{}
	return context.WithValue(ctx, fakeTxKey{}, r.tx), nil
}

func (r *fakeReservation) Complete(_ context.Context, rec *Record) error {
	if r.s.completeErr != nil {
		r.Release()
		return r.s.completeErr
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.s.records[r.k] = *rec
	r.s.written = append(r.s.written, r.tx.writes...)
	r.s.held[r.k] = false
	r.done = true
	return nil
}

func (r *fakeReservation) Release() error {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if !r.done {
		r.done = true
		r.s.held[r.k] = false
		r.s.releases++
	}
	return nil
}

// write stages a handler write in the request's transaction; outside one it fails
// the test, for a keyed handler must run inside its reservation.
func write(t *testing.T, c echo.Context, what string) {
	tx, ok := c.Request().Context().Value(fakeTxKey{}).(*fakeTx)
	if !ok {
		t.Fatal("handler ran outside its reservation's transaction")
	}
	tx.writes = append(tx.writes, what)
}

type engineTest struct {
	t       *testing.T
	store   *fakeStore
	now     time.Time
	metrics *Metrics
	mw      echo.MiddlewareFunc
	ran     int
	hashed  []HashMode // the modes the stream hasher was called with
}

// streamType is the media type newEngineTest's Fingerprinter hashes as a stream.
const streamType = "application/x-test-stream"

const (
	testKey   = "key-0001-abcd"
	testScope = "tenant-1"
)

var testRK = RecordKey{Scope: testScope, Method: http.MethodPost, Path: "/things", Key: testKey}

func newEngineTest(t *testing.T) *engineTest {
	et := &engineTest{t: t, store: newFakeStore(), now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), metrics: NewMetrics(nil)}
	mw, err := Config{
		Store:      et.store,
		Scope:      func(echo.Context) (string, error) { return testScope, nil },
		Now:        func() time.Time { return et.now },
		RetryAfter: 3 * time.Second,
		TTL:        time.Hour,
		Lease:      time.Minute,
		Metrics:    et.metrics,
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		Fingerprinter: &Fingerprinter{Hashers: map[string]BodyHasher{streamType: BodyHasherFunc(
			func(c echo.Context, w io.Writer, mode HashMode) error {
				et.hashed = append(et.hashed, mode)
				_, err := io.Copy(w, c.Request().Body)
				return err
			})}},
	}.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	et.mw = mw
	return et
}

// do sends POST /things with body and key ("" for none) through the engine to h, and
// returns the response and the error the engine returned (the server's error
// handler would render it).
func (et *engineTest) do(key, body string, h func(c echo.Context) error) (*httptest.ResponseRecorder, error) {
	return et.send(key, echo.MIMEApplicationJSON, strings.NewReader(body), h)
}

// send is do with any body and media type.
func (et *engineTest) send(key, contentType string, body io.Reader, h func(c echo.Context) error) (*httptest.ResponseRecorder, error) {
	req := httptest.NewRequest(http.MethodPost, "/things", body)
	req.Header.Set(echo.HeaderContentType, contentType)
	if key != "" {
		req.Header.Set(HeaderIdempotencyKey, key)
	}
	res := httptest.NewRecorder()
	e := echo.New()
	c := e.NewContext(req, res)
	c.SetPath("/things")
	err := et.mw(func(c echo.Context) error {
		et.ran++
		return h(c)
	})(c)
	return res, err
}

// created is a handler that writes one row and answers 201.
func (et *engineTest) created(name string) func(echo.Context) error {
	return func(c echo.Context) error {
		write(et.t, c, name)
		return c.JSON(http.StatusCreated, map[string]string{"name": name})
	}
}

func (et *engineTest) count(o Outcome) int {
	var m dto.Metric
	if err := et.metrics.requests.WithLabelValues(string(o)).Write(&m); err != nil {
		et.t.Fatal(err)
	}
	return int(m.GetCounter().GetValue())
}

// wantProblem asserts err is the problem code, and returns it.
func wantProblem(t *testing.T, err error, code problem.Code) *problem.Problem {
	t.Helper()
	p := problem.As(err)
	if p == nil || p.Code != code {
		t.Fatalf("error %v, want %s", err, code)
	}
	return p
}

func TestAbsentKeyRunsOnceAndCompletes(t *testing.T) {
	et := newEngineTest(t)
	res, err := et.do(testKey, `{"name":"a"}`, et.created("a"))
	if err != nil || res.Code != http.StatusCreated || res.Header().Get(HeaderReplayed) != "false" {
		t.Fatalf("first: %d %q %v", res.Code, res.Header().Get(HeaderReplayed), err)
	}
	rec := et.store.record(testRK)
	if rec == nil || rec.State != StateComplete || rec.StatusCode != http.StatusCreated ||
		string(rec.Body) != res.Body.String() || rec.ContentType != res.Header().Get(echo.HeaderContentType) {
		t.Fatalf("record %+v, want COMPLETE with the response", rec)
	}
	if !rec.ExpiresAt.Equal(et.now.Add(time.Hour)) {
		t.Errorf("expires %v, want now + TTL", rec.ExpiresAt)
	}
	if !reflect.DeepEqual(et.store.written, []string{"a"}) || et.store.held[testRK] {
		t.Fatalf("writes %v, held %v; want one committed write and the key free", et.store.written, et.store.held[testRK])
	}
	if et.count(OutcomeExecuted) != 1 {
		t.Errorf("executed = %d, want 1", et.count(OutcomeExecuted))
	}
}

func TestCompleteSameFingerprintReplaysByteIdentical(t *testing.T) {
	et := newEngineTest(t)
	first, _ := et.do(testKey, `{"name":"a","n":2}`, et.created("a"))
	before := et.store.record(testRK)
	// Same JSON value, other spelling: the same request.
	again, err := et.do(testKey, `{ "n": 2.0, "name": "a" }`, et.created("b"))
	if err != nil || again.Code != first.Code || again.Body.String() != first.Body.String() ||
		again.Header().Get(echo.HeaderContentType) != first.Header().Get(echo.HeaderContentType) ||
		again.Header().Get(HeaderReplayed) != "true" {
		t.Fatalf("retry: %d %q %q %v; want the first response replayed", again.Code, again.Header().Get(HeaderReplayed), again.Body, err)
	}
	if et.ran != 1 || len(et.store.written) != 1 {
		t.Fatalf("handler ran %d times, %d writes; want once", et.ran, len(et.store.written))
	}
	if after := et.store.record(testRK); !reflect.DeepEqual(before, after) || et.store.held[testRK] {
		t.Fatalf("a replay changed the record or kept the key: %+v", after)
	}
	if et.count(OutcomeReplayed) != 1 {
		t.Errorf("replayed = %d", et.count(OutcomeReplayed))
	}
}

func TestReplayOfEmptyResponseStaysEmpty(t *testing.T) {
	et := newEngineTest(t)
	noContent := func(c echo.Context) error { write(t, c, "gone"); return c.NoContent(http.StatusNoContent) }
	et.do(testKey, "", noContent)
	again, err := et.do(testKey, "", noContent)
	if err != nil || again.Code != http.StatusNoContent || again.Body.Len() != 0 || again.Header().Get(HeaderReplayed) != "true" {
		t.Fatalf("retry: %d %q %q %v", again.Code, again.Header().Get(HeaderReplayed), again.Body, err)
	}
}

func TestCompleteOtherFingerprintIs422AndChangesNothing(t *testing.T) {
	et := newEngineTest(t)
	et.do(testKey, `{"name":"a"}`, et.created("a"))
	before := et.store.record(testRK)
	res, err := et.do(testKey, `{"name":"b"}`, et.created("b"))
	wantProblem(t, err, problem.IdempotencyKeyReused)
	if et.ran != 1 || res.Header().Get(HeaderReplayed) != "" {
		t.Fatalf("handler ran %d times, replayed %q", et.ran, res.Header().Get(HeaderReplayed))
	}
	if after := et.store.record(testRK); !reflect.DeepEqual(before, after) || et.store.held[testRK] {
		t.Fatalf("422 changed the record or kept the key: %+v", after)
	}
}

func TestLockedKeyIs409WithRetryAfter(t *testing.T) {
	for _, prior := range []struct {
		name string
		rec  *Record
	}{
		{"no record", nil},
		{"failed record", &Record{RecordKey: testRK, Fingerprint: "x", State: StateFailed}},
	} {
		t.Run(prior.name, func(t *testing.T) {
			et := newEngineTest(t)
			if prior.rec != nil {
				prior.rec.ExpiresAt = et.now.Add(time.Hour)
				et.store.records[testRK] = *prior.rec
			}
			et.store.held[testRK] = true // another request is running
			_, err := et.do(testKey, `{"name":"a"}`, et.created("a"))
			p := wantProblem(t, err, problem.IdempotencyRequestInProgress)
			if p.RetryAfter != 3*time.Second {
				t.Errorf("Retry-After %v, want the configured 3s", p.RetryAfter)
			}
			if et.ran != 0 || !reflect.DeepEqual(et.store.record(testRK), prior.rec) || !et.store.held[testRK] {
				t.Fatalf("409 ran the handler (%d), changed the record or freed another's lock", et.ran)
			}
		})
	}
}

// A finished request is replayed even while another request holds its key (a lock
// collision, or a retry racing the sweep): 409 only when no record answers.
func TestLiveCompleteAnswersEvenWhenLocked(t *testing.T) {
	et := newEngineTest(t)
	first, _ := et.do(testKey, `{"name":"a"}`, et.created("a"))
	et.store.held[testRK] = true
	again, err := et.do(testKey, `{"name":"a"}`, et.created("a"))
	if err != nil || again.Body.String() != first.Body.String() || again.Header().Get(HeaderReplayed) != "true" {
		t.Fatalf("retry while locked: %d %v, want the replay", again.Code, err)
	}
	_, err = et.do(testKey, `{"name":"b"}`, et.created("b"))
	wantProblem(t, err, problem.IdempotencyKeyReused)
}

// A live COMPLETE record answers from the plain read: a replay or a 422 takes no
// lock and no transaction; anything else goes on to the locked path.
func TestLiveCompleteAnswersWithoutReserving(t *testing.T) {
	et := newEngineTest(t)
	et.do(testKey, `{"name":"a"}`, et.created("a"))
	if et.store.lookups != 1 || et.store.reserves != 1 {
		t.Fatalf("first execution: %d lookups, %d reservations; want 1, 1", et.store.lookups, et.store.reserves)
	}
	et.do(testKey, `{"name":"a"}`, et.created("a"))
	_, err := et.do(testKey, `{"name":"b"}`, et.created("b"))
	wantProblem(t, err, problem.IdempotencyKeyReused)
	if et.store.lookups != 3 || et.store.reserves != 1 || et.ran != 1 {
		t.Fatalf("replay and 422: %d lookups, %d reservations, ran %d; want 3, 1, 1", et.store.lookups, et.store.reserves, et.ran)
	}
}

// An attempt that completes between the plain read and the lock is replayed from
// the read under the lock, never run a second time.
func TestCompletedAfterLookupIsReplayedNotRun(t *testing.T) {
	et := newEngineTest(t)
	first, _ := et.do(testKey, `{"name":"a"}`, et.created("a"))
	done := *et.store.record(testRK)
	delete(et.store.records, testRK)
	et.store.beforeReserve = func(s *fakeStore) { s.records[testRK] = done }
	again, err := et.do(testKey, `{"name":"a"}`, et.created("a"))
	if err != nil || again.Body.String() != first.Body.String() || again.Header().Get(HeaderReplayed) != "true" || et.ran != 1 {
		t.Fatalf("retry: %d %q, ran %d; want the replay and one run", again.Code, again.Header().Get(HeaderReplayed), et.ran)
	}
	if et.store.held[testRK] {
		t.Fatal("the key is still held after a replay from the locked path")
	}
}

func TestFailedOrExpiredRecordRunsAgain(t *testing.T) {
	for _, tc := range []struct {
		name string
		prev func(now time.Time) Record
	}{
		{"failed, other body", func(now time.Time) Record {
			return Record{RecordKey: testRK, Fingerprint: "other", State: StateFailed, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
		}},
		{"complete but expired", func(now time.Time) Record {
			return Record{RecordKey: testRK, Fingerprint: "other", State: StateComplete, StatusCode: 201,
				Body: []byte(`{"old":true}`), CreatedAt: now.Add(-2 * time.Hour), ExpiresAt: now}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			et := newEngineTest(t)
			et.store.records[testRK] = tc.prev(et.now)
			res, err := et.do(testKey, `{"name":"a"}`, et.created("a"))
			if err != nil || res.Code != http.StatusCreated || res.Header().Get(HeaderReplayed) != "false" {
				t.Fatalf("%d %q %v, want a fresh run", res.Code, res.Header().Get(HeaderReplayed), err)
			}
			if rec := et.store.record(testRK); rec.State != StateComplete || string(rec.Body) != res.Body.String() {
				t.Fatalf("record %+v, want the new COMPLETE", rec)
			}
			if et.count(OutcomeTakenOver) != 1 {
				t.Errorf("taken_over = %d, want 1", et.count(OutcomeTakenOver))
			}
		})
	}
}

func TestStoreErrorsFailClosed(t *testing.T) {
	down := errors.New("connection refused")
	for _, tc := range []struct {
		name       string
		breakStore func(*fakeStore)
		ran        int
	}{
		{"lookup", func(s *fakeStore) { s.lookupErr = down }, 0},
		{"reserve", func(s *fakeStore) { s.reserveErr = down }, 0},
		{"begin", func(s *fakeStore) { s.beginErr = down }, 0},
		{"complete", func(s *fakeStore) { s.completeErr = down }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			et := newEngineTest(t)
			tc.breakStore(et.store)
			res, err := et.do(testKey, `{"name":"a"}`, et.created("a"))
			p := wantProblem(t, err, problem.StoreUnavailable)
			if p.RetryAfter != 3*time.Second || strings.Contains(p.Detail, "refused") {
				t.Errorf("problem %+v: want Retry-After and no internals", p)
			}
			if et.ran != tc.ran || res.Body.Len() != 0 {
				t.Fatalf("handler ran %d times, body %q; want %d and nothing sent", et.ran, res.Body, tc.ran)
			}
			if et.store.record(testRK) != nil || len(et.store.written) != 0 || et.store.held[testRK] {
				t.Fatalf("a failed store left a record, a write or the lock")
			}
			if et.count(OutcomeStoreUnavailable) != 1 {
				t.Errorf("store_unavailable = %d", et.count(OutcomeStoreUnavailable))
			}
		})
	}
}

func TestHandlerFailureMarksFailedAndPassesTheErrorOn(t *testing.T) {
	invalid := problem.Invalid("name", "is required")
	for _, tc := range []struct {
		name string
		h    func(t *testing.T) func(echo.Context) error
		want int // response status written by the handler itself, 0 if it returned an error
	}{
		{"returned error", func(t *testing.T) func(echo.Context) error {
			return func(c echo.Context) error { write(t, c, "half"); return invalid }
		}, 0},
		{"written 404", func(t *testing.T) func(echo.Context) error {
			return func(c echo.Context) error {
				write(t, c, "half")
				return c.JSON(http.StatusNotFound, map[string]string{"code": "NOT_FOUND"})
			}
		}, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			et := newEngineTest(t)
			res, err := et.do(testKey, `{"name":"a"}`, tc.h(t))
			if tc.want == 0 && err != error(invalid) {
				t.Fatalf("error %v, want the handler's own, unchanged", err)
			}
			if tc.want != 0 && (err != nil || res.Code != tc.want || !strings.Contains(res.Body.String(), "NOT_FOUND")) {
				t.Fatalf("%d %q %v, want the handler's response", res.Code, res.Body, err)
			}
			if res.Header().Get(HeaderReplayed) != "false" {
				t.Errorf("Idempotent-Replayed %q, want false", res.Header().Get(HeaderReplayed))
			}
			rec := et.store.record(testRK)
			if rec == nil || rec.State != StateFailed || rec.Body != nil || len(et.store.written) != 0 || et.store.held[testRK] {
				t.Fatalf("record %+v, writes %v: want FAILED, rolled back, key free", rec, et.store.written)
			}
			if et.count(OutcomeFailed) != 1 {
				t.Errorf("failed = %d", et.count(OutcomeFailed))
			}
			// The key may be retried, with a corrected body.
			ok, err := et.do(testKey, `{"name":"b"}`, et.created("b"))
			if err != nil || ok.Code != http.StatusCreated || et.store.record(testRK).State != StateComplete {
				t.Fatalf("corrected retry: %d %v", ok.Code, err)
			}
		})
	}
}

func TestHandlerPanicMarksFailedAndPanicsOn(t *testing.T) {
	et := newEngineTest(t)
	var recovered any
	func() {
		defer func() { recovered = recover() }()
		et.do(testKey, `{"name":"a"}`, func(c echo.Context) error {
			write(t, c, "half")
			panic("boom")
		})
	}()
	if recovered != "boom" {
		t.Fatalf("recovered %v, want the handler's panic", recovered)
	}
	rec := et.store.record(testRK)
	if rec == nil || rec.State != StateFailed || len(et.store.written) != 0 || et.store.held[testRK] {
		t.Fatalf("record %+v, writes %v: want FAILED, rolled back, key free", rec, et.store.written)
	}
}

// A FAILED mark that arrives after another attempt completed must not replace it.
func TestLateFailureNeverOverwritesASuccess(t *testing.T) {
	et := newEngineTest(t)
	res, _ := et.do(testKey, `{"name":"a"}`, func(c echo.Context) error {
		// While this attempt runs, its key is taken over and completed by another
		// (as after this one's lease ran out).
		et.store.mu.Lock()
		et.store.records[testRK] = Record{RecordKey: testRK, Fingerprint: "winner", State: StateComplete,
			StatusCode: 201, CreatedAt: et.now, ExpiresAt: et.now.Add(time.Hour)}
		et.store.mu.Unlock()
		return problem.New(problem.Internal, "late")
	})
	if rec := et.store.record(testRK); rec.State != StateComplete || rec.Fingerprint != "winner" {
		t.Fatalf("record %+v, want the other attempt's COMPLETE (response %d)", rec, res.Code)
	}
}

func TestRefusedBeforeTheStore(t *testing.T) {
	et := newEngineTest(t)
	_, err := et.do("short", `{}`, et.created("a"))
	wantProblem(t, err, problem.IdempotencyKeyInvalid)
	res, err := et.do("", `{}`, func(c echo.Context) error { return c.NoContent(http.StatusCreated) })
	if err != nil || res.Code != http.StatusCreated || res.Header().Get(HeaderReplayed) != "" {
		t.Fatalf("unkeyed: %d %v, want it run without the engine", res.Code, err)
	}
	if et.store.lookups != 0 || et.store.reserves != 0 || len(et.store.records) != 0 {
		t.Fatalf("%d lookups, %d reservations, %d records; want none", et.store.lookups, et.store.reserves, len(et.store.records))
	}
}

func TestDecideTable(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	held := &fakeReservation{}
	live := func(state State, fp string) *Record {
		return &Record{Fingerprint: fp, State: state, ExpiresAt: now.Add(time.Second)}
	}
	expired := &Record{Fingerprint: "fp", State: StateComplete, ExpiresAt: now}
	for _, tc := range []struct {
		name string
		obs  Observation
		want verdict
	}{
		{"absent, held", Observation{Held: held}, run},
		{"absent, locked", Observation{}, inProgress},
		{"failed, held", Observation{Record: live(StateFailed, "fp"), Held: held}, run},
		{"failed, locked", Observation{Record: live(StateFailed, "fp")}, inProgress},
		{"expired, held", Observation{Record: expired, Held: held}, run},
		{"expired, locked", Observation{Record: expired}, inProgress},
		{"complete same, held", Observation{Record: live(StateComplete, "fp"), Held: held}, replay},
		{"complete same, locked", Observation{Record: live(StateComplete, "fp")}, replay},
		{"complete other, held", Observation{Record: live(StateComplete, "other"), Held: held}, keyReused},
		{"complete other, locked", Observation{Record: live(StateComplete, "other")}, keyReused},
	} {
		if got := decide(tc.obs, "fp", now); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// A streamed body is looked up before it is read: a key another request holds is
// refused with 409 without a byte of the body read; a live COMPLETE record answers
// after the body is hashed in HashDiscard mode (nothing kept), even while the key is
// held; only a request that may run is hashed in HashKeep mode and reserves.
func TestStreamedBodyIsLookedUpBeforeItIsRead(t *testing.T) {
	et := newEngineTest(t)
	et.store.held[testRK] = true
	body := &countingReader{r: strings.NewReader("file bytes")}
	_, err := et.send(testKey, streamType, body, et.created("a"))
	wantProblem(t, err, problem.IdempotencyRequestInProgress)
	if body.n != 0 || len(et.hashed) != 0 || et.store.reserves != 0 || et.ran != 0 {
		t.Fatalf("409 read %d bytes, hashed %v, reserved %d times", body.n, et.hashed, et.store.reserves)
	}
	if et.count(OutcomeInProgress) != 1 {
		t.Errorf("in_progress = %d", et.count(OutcomeInProgress))
	}

	et.store.held[testRK] = false
	first, err := et.send(testKey, streamType, strings.NewReader("file bytes"), et.created("a"))
	if err != nil || first.Code != http.StatusCreated || !reflect.DeepEqual(et.hashed, []HashMode{HashKeep}) || et.store.reserves != 1 {
		t.Fatalf("first: %d %v, hashed %v, %d reservations; want 201, [HashKeep], 1", first.Code, err, et.hashed, et.store.reserves)
	}
	et.store.held[testRK] = true // a live record is trusted over the lock
	again, err := et.send(testKey, streamType, strings.NewReader("file bytes"), et.created("a"))
	if err != nil || again.Body.String() != first.Body.String() || again.Header().Get(HeaderReplayed) != "true" {
		t.Fatalf("retry: %d %v, want the replay", again.Code, err)
	}
	_, err = et.send(testKey, streamType, strings.NewReader("other bytes"), et.created("b"))
	wantProblem(t, err, problem.IdempotencyKeyReused)
	if want := []HashMode{HashKeep, HashDiscard, HashDiscard}; !reflect.DeepEqual(et.hashed, want) {
		t.Errorf("hash modes %v, want %v", et.hashed, want)
	}
	if et.store.reserves != 1 || et.ran != 1 {
		t.Errorf("%d reservations, ran %d; want 1, 1", et.store.reserves, et.ran)
	}
}

// The early look decides nothing it cannot: a key free when the streamed body
// arrives but taken while it was read is refused by Reserve, and a failing Held
// fails closed before the body is read.
func TestStreamedBodyStillReservesAfterTheEarlyLook(t *testing.T) {
	et := newEngineTest(t)
	et.store.beforeReserve = func(s *fakeStore) { s.held[testRK] = true }
	_, err := et.send(testKey, streamType, strings.NewReader("bytes"), et.created("a"))
	wantProblem(t, err, problem.IdempotencyRequestInProgress)
	if et.ran != 0 || et.store.reserves != 1 {
		t.Fatalf("ran %d, %d reservations", et.ran, et.store.reserves)
	}

	et = newEngineTest(t)
	et.store.heldErr = errors.New("connection refused")
	body := &countingReader{r: strings.NewReader("bytes")}
	_, err = et.send(testKey, streamType, body, et.created("a"))
	wantProblem(t, err, problem.StoreUnavailable)
	if body.n != 0 || et.ran != 0 || et.count(OutcomeStoreUnavailable) != 1 {
		t.Fatalf("read %d bytes, ran %d", body.n, et.ran)
	}
}
