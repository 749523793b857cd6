package gormstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/sweep"
)

func TestExpiredRecordRunsAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *idempotency.Config) { c.TTL = time.Hour })
	h.do(call{key: "ttl-key-01", body: `{"name":"once","id":"t1"}`})
	h.clock.Advance(59 * time.Minute)
	if r := h.do(call{key: "ttl-key-01", body: `{"name":"once","id":"t1"}`}); r.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("within the TTL: %d, want a replay", r.Code)
	}
	// Past the TTL the record is absent at lookup, whether or not a sweep ran.
	h.clock.Advance(2 * time.Minute)
	if r := h.do(call{key: "ttl-key-01", body: `{"name":"twice","id":"t2"}`}); r.Code != 201 || r.Header().Get("Idempotent-Replayed") != "false" {
		t.Fatalf("past the TTL: %d %s, want a new execution", r.Code, r.Body)
	}
	if got := h.ran.Load(); got != 2 {
		t.Fatalf("handler ran %d times, want 2", got)
	}
}

func TestSweepDeletesExactlyTheExpiredRecords(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *idempotency.Config) { c.TTL = time.Hour })
	for i := range 7 {
		h.do(call{key: fmt.Sprintf("old-key-%02d", i), body: fmt.Sprintf(`{"name":"old%d","id":"o%d"}`, i, i)})
	}
	h.do(call{key: "failed-old", body: `{"name":"f","fail":"500"}`}) // FAILED records expire too
	h.clock.Advance(30 * time.Minute)
	for i := range 5 {
		h.do(call{key: fmt.Sprintf("new-key-%02d", i), body: fmt.Sprintf(`{"name":"new%d","id":"n%d"}`, i, i)})
	}
	h.clock.Advance(31 * time.Minute) // the first 8 are now past their hour, the last 5 are not

	sw := &idempotency.Sweeper{Store: h.store, Now: h.clock.Now, Pacing: sweep.Pacing{Size: 3}}
	n, err := sw.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n != 8 {
		t.Fatalf("swept %d, want 8", n)
	}
	if got := h.count("idempotency_records"); got != 5 {
		t.Fatalf("%d records left, want 5", got)
	}
	for i := range 5 {
		if h.record("tenant-a", "POST", "/widgets", fmt.Sprintf("new-key-%02d", i)) == nil {
			t.Fatalf("live record new-key-%02d was swept", i)
		}
	}
	if n, _ := sw.Sweep(context.Background()); n != 0 {
		t.Fatalf("second sweep deleted %d, want 0", n)
	}
}

func TestSweepKeepsARecordReReservedAfterExpiring(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *idempotency.Config) { c.TTL = time.Hour })
	h.do(call{key: "re-reserved", body: `{"name":"v1","id":"v1"}`})
	h.clock.Advance(2 * time.Hour)
	cutoff := h.clock.Now()
	// The key is used again after expiring; its new record lives another hour.
	h.do(call{key: "re-reserved", body: `{"name":"v2","id":"v2"}`})
	n, err := h.store.DeleteExpired(context.Background(), cutoff, 100)
	if err != nil {
		t.Fatal(err)
	}
	if rec := h.record("tenant-a", "POST", "/widgets", "re-reserved"); n != 0 || rec == nil || rec.State != idempotency.StateComplete {
		t.Fatalf("sweep deleted %d and left %+v; the re-reserved record must survive", n, rec)
	}
}

func TestConcurrentSweepersDeleteEachRecordOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *idempotency.Config) { c.TTL = time.Minute })
	const records = 120
	now := h.clock.Now()
	for i := range records {
		rec := &idempotency.Record{
			RecordKey:   idempotency.RecordKey{Scope: "s", Method: "POST", Path: "/widgets", Key: fmt.Sprintf("bulk-%04d", i)},
			Fingerprint: "f", State: idempotency.StateFailed, CreatedAt: now, ExpiresAt: now.Add(time.Minute),
		}
		if err := h.store.MarkFailed(context.Background(), rec, now); err != nil {
			t.Fatal(err)
		}
	}
	h.clock.Advance(2 * time.Minute)
	var total atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sw := &idempotency.Sweeper{Store: h.store, Now: h.clock.Now, Pacing: sweep.Pacing{Size: 7}}
			n, err := sw.Sweep(context.Background())
			if err != nil {
				t.Error(err)
			}
			total.Add(int64(n))
		}()
	}
	wg.Wait()
	if total.Load() != records || h.count("idempotency_records") != 0 {
		t.Fatalf("sweepers deleted %d in all, %d left; want %d and 0", total.Load(), h.count("idempotency_records"), records)
	}
}
