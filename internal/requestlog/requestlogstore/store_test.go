package requestlogstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/requestlog"
	"github.com/riskapi/riskapi/internal/requestlog/requestlogstore"
	"github.com/riskapi/riskapi/internal/sweep"
)

var base = time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)

// entry returns a complete entry of tenant with request id id, created base+offset
// (and after every entry made before it).
func entry(tenant, id string, offset time.Duration) *requestlog.Entry {
	return &requestlog.Entry{ID: ids.New(ids.RequestLog), RequestID: id, TenantID: tenant, Method: "POST", Path: "/v2/risks", Route: "/v2/risks",
		Status: 201, Duration: 1500 * time.Microsecond, Credential: requestlog.Credential{Type: "api_key", ID: "key_1"},
		IdempotencyKey: "key-" + id, IdempotencyOutcome: requestlog.OutcomeExecuted, CreatedAt: base.Add(offset)}
}

// TestRoundTrip: an entry reads back exactly, optional members absent stay absent,
// and another tenant cannot read it even by its request id.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	s := requestlogstore.New(dbtest.Open(t))
	ctx := context.Background()
	full := entry("ten_a", "req-full", 0)
	full.ErrorCode = "VALIDATION_FAILED"
	bare := &requestlog.Entry{ID: ids.New(ids.RequestLog), RequestID: "req-bare", TenantID: "ten_a", Method: "GET", Path: "/v1/risks", Route: "/v1/risks",
		Status: 200, Duration: 3 * time.Millisecond, Credential: requestlog.Credential{Type: "session", ID: "usr_1"},
		CreatedAt: base.Add(time.Second)}
	if err := s.Insert(ctx, []*requestlog.Entry{full, bare}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []*requestlog.Entry{full, bare} {
		got, err := s.Get(ctx, "ten_a", want.RequestID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-stored +read):\n%s", want.RequestID, diff)
		}
	}
	if _, err := s.Get(ctx, "ten_b", "req-full"); !errors.Is(err, requestlog.ErrNotFound) {
		t.Errorf("another tenant's Get = %v, want ErrNotFound", err)
	}
}

// TestGetNewestOfRepeatedID: a client may send the same X-Request-Id twice; both
// entries are kept and Get answers the newer one.
func TestGetNewestOfRepeatedID(t *testing.T) {
	t.Parallel()
	s := requestlogstore.New(dbtest.Open(t))
	ctx := context.Background()
	first, second := entry("ten_a", "req-same", 0), entry("ten_a", "req-same", time.Second)
	second.Status = 409
	if err := s.Insert(ctx, []*requestlog.Entry{second, first}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "ten_a", "req-same")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != 409 {
		t.Errorf("Get returned the status %d entry, want the newer (409)", got.Status)
	}
	all, _, err := s.List(ctx, "ten_a", requestlog.Filter{Limit: 10})
	if err != nil || len(all) != 2 {
		t.Errorf("List = %d entries (%v), want both", len(all), err)
	}
}

// TestListPagesNewestFirst pages through 25 entries, several sharing a timestamp,
// three at a time: every entry exactly once, newest first, nothing of another tenant.
func TestListPagesNewestFirst(t *testing.T) {
	t.Parallel()
	s := requestlogstore.New(dbtest.Open(t))
	ctx := context.Background()
	var batch []*requestlog.Entry
	for i := range 25 {
		// Pairs share a timestamp: order and cursor do not depend on it.
		batch = append(batch, entry("ten_a", fmt.Sprintf("req-%02d", i), time.Duration(i/2)*time.Millisecond))
		batch = append(batch, entry("ten_b", fmt.Sprintf("other-%02d", i), time.Duration(i)*time.Millisecond))
	}
	if err := s.Insert(ctx, batch); err != nil {
		t.Fatal(err)
	}
	var got []*requestlog.Entry
	f := requestlog.Filter{Limit: 3}
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		page, more, err := s.List(ctx, "ten_a", f)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page...)
		if !more {
			break
		}
		f.Before = page[len(page)-1].ID
	}
	if len(got) != 25 {
		t.Fatalf("paged %d entries, want 25", len(got))
	}
	seen := map[string]bool{}
	for i, e := range got {
		if e.TenantID != "ten_a" || seen[e.RequestID] {
			t.Errorf("entry %d: %s of %s (seen before: %v)", i, e.RequestID, e.TenantID, seen[e.RequestID])
		}
		seen[e.RequestID] = true
		if want := fmt.Sprintf("req-%02d", 24-i); e.RequestID != want {
			t.Errorf("entry %d is %s, want %s (newest first)", i, e.RequestID, want)
		}
	}
}

// TestListFilters: each filter selects exactly the matching entries.
func TestListFilters(t *testing.T) {
	t.Parallel()
	s := requestlogstore.New(dbtest.Open(t))
	ctx := context.Background()
	mk := func(id string, offset time.Duration, mod func(*requestlog.Entry)) *requestlog.Entry {
		e := entry("ten_a", id, offset)
		mod(e)
		return e
	}
	batch := []*requestlog.Entry{
		mk("exec", 0, func(e *requestlog.Entry) {}),
		mk("replay", time.Second, func(e *requestlog.Entry) { e.IdempotencyOutcome = requestlog.OutcomeReplayed }),
		mk("conflict", 2*time.Second, func(e *requestlog.Entry) {
			e.Status, e.IdempotencyOutcome, e.ErrorCode = 409, requestlog.OutcomeInProgress, "IDEMPOTENCY_REQUEST_IN_PROGRESS"
		}),
		mk("read", 3*time.Second, func(e *requestlog.Entry) {
			e.Method, e.Status, e.IdempotencyKey, e.IdempotencyOutcome = "GET", 200, "", ""
		}),
		mk("other-key", 4*time.Second, func(e *requestlog.Entry) { e.IdempotencyKey = "key-exec-2" }),
	}
	batch[1].IdempotencyKey = "key-exec"
	batch[2].IdempotencyKey = "key-exec"
	if err := s.Insert(ctx, batch); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    requestlog.Filter
		want []string
	}{
		{"all", requestlog.Filter{}, []string{"other-key", "read", "conflict", "replay", "exec"}},
		{"idempotency key", requestlog.Filter{IdempotencyKey: "key-exec"}, []string{"conflict", "replay", "exec"}},
		{"status", requestlog.Filter{Status: 409}, []string{"conflict"}},
		{"method", requestlog.Filter{Method: "GET"}, []string{"read"}},
		{"outcome", requestlog.Filter{Outcome: requestlog.OutcomeReplayed}, []string{"replay"}},
		{"since", requestlog.Filter{Since: base.Add(3 * time.Second)}, []string{"other-key", "read"}},
		{"until", requestlog.Filter{Until: base.Add(time.Second)}, []string{"exec"}},
		{"since and until", requestlog.Filter{Since: base.Add(time.Second), Until: base.Add(3 * time.Second)}, []string{"conflict", "replay"}},
		{"combined", requestlog.Filter{IdempotencyKey: "key-exec", Status: 201}, []string{"replay", "exec"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.Limit = 100
			got, more, err := s.List(ctx, "ten_a", tc.f)
			if err != nil {
				t.Fatal(err)
			}
			var reqs []string
			for _, e := range got {
				reqs = append(reqs, e.RequestID)
			}
			if diff := cmp.Diff(tc.want, reqs); diff != "" || more {
				t.Errorf("ids (-want +got):\n%s (more %v)", diff, more)
			}
		})
	}
}

// TestSweepDeletesOnlyOld: the sweep removes exactly the entries older than the TTL,
// in batches, and concurrent sweepers together delete each once.
func TestSweepDeletesOnlyOld(t *testing.T) {
	t.Parallel()
	s := requestlogstore.New(dbtest.Open(t))
	ctx := context.Background()
	now := base.Add(48 * time.Hour)
	const old, fresh = 777, 40
	var batch []*requestlog.Entry
	for i := range old {
		batch = append(batch, entry(fmt.Sprintf("ten_%d", i%3), fmt.Sprintf("old-%d", i), time.Duration(i)*time.Millisecond))
		if len(batch) == 400 {
			if err := s.Insert(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}
	for i := range fresh {
		// The TTL is 24h: these are just inside it.
		batch = append(batch, entry("ten_0", fmt.Sprintf("new-%d", i), 24*time.Hour+time.Duration(i+1)*time.Second))
	}
	if err := s.Insert(ctx, batch); err != nil {
		t.Fatal(err)
	}
	// One bounded batch deletes the oldest first.
	n, err := s.DeleteBefore(ctx, now.Add(-24*time.Hour), 100)
	if err != nil || n != 100 {
		t.Fatalf("DeleteBefore(limit 100) = %d, %v", n, err)
	}
	if _, err := s.Get(ctx, "ten_0", "old-0"); !errors.Is(err, requestlog.ErrNotFound) {
		t.Errorf("the oldest entry survived the first batch: %v", err)
	}

	var wg sync.WaitGroup
	counts := make([]int, 3)
	for i := range counts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sw := &sweep.ByAge{Name: "request log sweep", DeleteBefore: s.DeleteBefore, TTL: 24 * time.Hour, Pacing: sweep.Pacing{Size: 50}, Now: func() time.Time { return now }}
			n, err := sw.Sweep(ctx)
			if err != nil {
				t.Error(err)
			}
			counts[i] = n
		}()
	}
	wg.Wait()
	if total := counts[0] + counts[1] + counts[2] + 100; total != old {
		t.Errorf("sweepers deleted %v (+100) = %d, want %d", counts, total, old)
	}
	left, _, err := s.List(ctx, "ten_0", requestlog.Filter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != fresh {
		t.Errorf("%d entries left, want the %d fresh ones", len(left), fresh)
	}
}

// TestInsertQueuesWithSQLiteWriters: the log writer's batch is a write, and on SQLite
// it waits its turn at the write gate like every other writer instead of polling the
// busy handler against the writer holding the lock: with a busy timeout far shorter
// than that writer's transaction, the batch is still stored, after it.
func TestInsertQueuesWithSQLiteWriters(t *testing.T) {
	if dbtest.Postgres() {
		t.Skip("only SQLite has one writer")
	}
	t.Parallel()
	ctx := context.Background()
	db, err := database.Open(ctx, dbtest.URL(t), database.Options{BusyTimeout: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := requestlogstore.New(db)

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
	if err := s.Insert(ctx, []*requestlog.Entry{entry("ten_a", "req-1", 0)}); err != nil {
		t.Fatalf("insert behind a writer: %v", err)
	}
	if err := <-writerDone; err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, "ten_a", "req-1"); err != nil || got.RequestID != "req-1" {
		t.Fatalf("stored entry: %v, %v", got, err)
	}
}
