package requestlog_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/requestlog"
	"github.com/riskapi/riskapi/internal/requestlog/requestlogstore"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func entry(i int) *requestlog.Entry {
	return &requestlog.Entry{ID: ids.New(ids.RequestLog), RequestID: fmt.Sprintf("req-%d", i), TenantID: "ten_a", Method: "GET", Path: "/v2/risks",
		Route: "/v2/risks", Status: 200, Credential: requestlog.Credential{Type: "api_key", ID: "key_1"},
		CreatedAt: time.Now().UTC()}
}

// counter returns the value of the metric name (with label reason=reason, if given).
func counter(t *testing.T, reg *prometheus.Registry, name, reason string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			ok := reason == ""
			for _, l := range m.GetLabel() {
				ok = ok || l.GetName() == "reason" && l.GetValue() == reason
			}
			if ok {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no metric %s{reason=%q}", name, reason)
	return 0
}

func count(t *testing.T, s requestlog.Store) int {
	t.Helper()
	got, _, err := s.List(context.Background(), "ten_a", requestlog.Filter{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	return len(got)
}

// TestWriterBatchesAndCloseFlushes: entries reach the store in batches of at most
// BatchSize; what is still queued at Close is inserted before Close returns.
func TestWriterBatchesAndCloseFlushes(t *testing.T) {
	t.Parallel()
	store := requestlogstore.New(dbtest.Open(t))
	reg := prometheus.NewRegistry()
	// A flush interval no test waits for: only full batches and Close insert.
	w, err := requestlog.NewWriter(requestlog.WriterConfig{Store: store, BatchSize: 50, FlushInterval: time.Hour,
		Metrics: requestlog.NewMetrics(reg), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 120 {
		if !w.Write(entry(i)) {
			t.Fatalf("entry %d dropped", i)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for count(t, store) < 100 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := count(t, store); n != 100 {
		t.Fatalf("%d entries stored before Close, want the two full batches (100)", n)
	}
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := count(t, store); n != 120 {
		t.Errorf("%d entries stored after Close, want 120", n)
	}
	if got := counter(t, reg, "riskapi_request_log_entries_written_total", ""); got != 120 {
		t.Errorf("written_total = %v, want 120", got)
	}
	if w.Write(entry(999)) {
		t.Error("Write after Close accepted the entry")
	}
	if got := counter(t, reg, "riskapi_request_log_entries_dropped_total", requestlog.DropClosed); got != 1 {
		t.Errorf("dropped_total{closed} = %v, want 1", got)
	}
}

// TestWriterFlushInterval: a lone entry is stored within about FlushInterval.
func TestWriterFlushInterval(t *testing.T) {
	t.Parallel()
	store := requestlogstore.New(dbtest.Open(t))
	w, err := requestlog.NewWriter(requestlog.WriterConfig{Store: store, FlushInterval: 50 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(context.Background())
	w.Write(entry(1))
	deadline := time.Now().Add(10 * time.Second)
	for count(t, store) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("a lone entry was never stored")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWriterStoresEveryEntryWithoutFlush: the writer is woken only when an entry
// finds the queue empty and when a batch is full, so entries written in bursts from
// many goroutines, while inserts are running, must all be stored on their own —
// without Flush or Close — within about FlushInterval of the last.
func TestWriterStoresEveryEntryWithoutFlush(t *testing.T) {
	t.Parallel()
	store := requestlogstore.New(dbtest.Open(t))
	w, err := requestlog.NewWriter(requestlog.WriterConfig{Store: store, BatchSize: 50, FlushInterval: 30 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(context.Background())
	const writers, each = 8, 150
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				w.Write(entry(g*each + i))
				if i%(7+g) == 0 { // bursts and pauses: the queue empties and refills
					time.Sleep(time.Duration(g+1) * 5 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for count(t, store) < writers*each {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d entries stored 10 s after the last write", count(t, store), writers*each)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stuckStore is a real store whose inserts wait for release: the database being
// slow or locked.
type stuckStore struct {
	requestlog.Store
	release chan struct{}
}

func (s stuckStore) Insert(ctx context.Context, es []*requestlog.Entry) error {
	<-s.release
	return s.Store.Insert(ctx, es)
}

// TestWriterNeverBlocks: while the store is stuck, Write returns at once; past the
// buffer entries are dropped and counted, and once the store recovers what was
// buffered is stored.
func TestWriterNeverBlocks(t *testing.T) {
	t.Parallel()
	store := stuckStore{requestlogstore.New(dbtest.Open(t)), make(chan struct{})}
	reg := prometheus.NewRegistry()
	w, err := requestlog.NewWriter(requestlog.WriterConfig{Store: store, BufferSize: 100, BatchSize: 10,
		FlushInterval: time.Millisecond, Metrics: requestlog.NewMetrics(reg), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int)
	go func() {
		accepted := 0
		for i := range 1000 {
			if w.Write(entry(i)) {
				accepted++
			}
		}
		done <- accepted
	}()
	var accepted int
	select {
	case accepted = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Write blocked while the store was stuck")
	}
	// The inserter holds one batch of 10 in its stuck insert, the buffer 100.
	if accepted < 100 || accepted > 110 {
		t.Errorf("accepted %d entries, want the buffer's 100 plus at most one batch", accepted)
	}
	if got := counter(t, reg, "riskapi_request_log_entries_dropped_total", requestlog.DropBufferFull); int(got) != 1000-accepted {
		t.Errorf("dropped_total{buffer_full} = %v, want %d", got, 1000-accepted)
	}
	close(store.release)
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := count(t, store); n != accepted {
		t.Errorf("%d entries stored, want the %d accepted", n, accepted)
	}
}

// TestWriterInsertFailureDrops: when the database is gone the batch is dropped and
// counted, and the Writer goes on.
func TestWriterInsertFailureDrops(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	reg := prometheus.NewRegistry()
	w, err := requestlog.NewWriter(requestlog.WriterConfig{Store: requestlogstore.New(db), Metrics: requestlog.NewMetrics(reg), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	for i := range 7 {
		w.Write(entry(i))
	}
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := counter(t, reg, "riskapi_request_log_entries_dropped_total", requestlog.DropInsertFailed); got != 7 {
		t.Errorf("dropped_total{insert_failed} = %v, want 7", got)
	}
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestWriterDropsFromTheBusiestTenant: with the store stuck and the buffer full, a
// tenant flooding the log loses its own entries, not another tenant's: all 50 of
// the quiet tenant's entries, written among 1,000 of the flood, are stored (issue
// 25, item 9).
func TestWriterDropsFromTheBusiestTenant(t *testing.T) {
	t.Parallel()
	store := stuckStore{requestlogstore.New(dbtest.Open(t)), make(chan struct{})}
	w, err := requestlog.NewWriter(requestlog.WriterConfig{Store: store, BufferSize: 100, BatchSize: 10,
		FlushInterval: time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1050 {
		e := entry(i)
		if i%21 == 20 {
			e.TenantID = "ten_b"
		}
		w.Write(e)
	}
	close(store.release)
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, _, err := store.List(context.Background(), "ten_b", requestlog.Filter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 50 {
		t.Errorf("the quiet tenant kept %d of its 50 entries while another flooded the log", len(got))
	}
}

// slowStore is a real store whose inserts take at least 5 ms more, counted: a
// database under load.
type slowStore struct {
	requestlog.Store
	mu      sync.Mutex
	inserts int
}

func (s *slowStore) Insert(ctx context.Context, es []*requestlog.Entry) error {
	time.Sleep(5 * time.Millisecond)
	s.mu.Lock()
	s.inserts++
	s.mu.Unlock()
	return s.Store.Insert(ctx, es)
}

// TestWriterBatchesSteadyTraffic: under steady traffic the writer inserts about
// once per FlushInterval, however long an insert takes. It used to insert again at
// once whenever entries had arrived during the last insert, so at 3000 requests/s
// PostgreSQL took ~100 COPYs of ~30 rows a second instead of 2 of 1500.
func TestWriterBatchesSteadyTraffic(t *testing.T) {
	t.Parallel()
	store := &slowStore{Store: requestlogstore.New(dbtest.Open(t))}
	const interval = 100 * time.Millisecond
	w, err := requestlog.NewWriter(requestlog.WriterConfig{Store: store, FlushInterval: interval, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(context.Background())
	start := time.Now()
	n := 0
	for time.Since(start) < time.Second { // an entry every 0.5 ms: 10 or more arrive during each insert
		w.Write(entry(n))
		n++
		time.Sleep(500 * time.Microsecond)
	}
	elapsed := time.Since(start)
	store.mu.Lock()
	inserts := store.inserts
	store.mu.Unlock()
	// One insert per interval, and a full batch's now and then; three per interval
	// is generous. A slow machine fires the timer late, which only lowers the count.
	if limit := 3*int(elapsed/interval) + 3; inserts > limit {
		t.Errorf("%d inserts for %d entries in %v, want at most %d (about one per %v)", inserts, n, elapsed.Round(time.Millisecond), limit, interval)
	}
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := count(t, store); got != n {
		t.Errorf("%d of %d entries stored after Close", got, n)
	}
}
