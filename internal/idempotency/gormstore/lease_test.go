package gormstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/idempotency/gormstore"
)

// A reservation whose process dies must free its key at once, and the dead attempt
// must never complete. Here the "process" is a second connection pool whose
// backend is terminated, as when its process is killed.
func TestAbandonedReservationFreesTheKeyAndCannotComplete(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("SQLite's reservation lives in its process; the crash test covers it")
	}
	t.Parallel()
	url := dbtest.URL(t)
	ctx := context.Background()
	dying, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dying.Close()
	survivor, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer survivor.Close()
	k := idempotency.RecordKey{Scope: "s", Method: "POST", Path: "/p", Key: "abandoned-1"}

	obs, err := gormstore.New(dying).Reserve(ctx, k)
	if err != nil || obs.Held == nil {
		t.Fatalf("first reservation: %+v, %v", obs, err)
	}
	res := obs.Held
	tctx, err := res.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	database.Conn(tctx, dying.DB).Raw("SELECT pg_backend_pid()").Scan(&pid)
	other := gormstore.New(survivor)
	if obs, err := other.Reserve(ctx, k); err != nil || obs.Held != nil {
		t.Fatalf("while held: %+v, %v; want the lock refused", obs, err)
	}
	if err := survivor.Exec("SELECT pg_terminate_backend(?)", pid).Error; err != nil {
		t.Fatal(err)
	}
	// Free at once, not after a lease.
	var taken idempotency.Reservation
	deadline := time.Now().Add(5 * time.Second)
	for taken == nil && time.Now().Before(deadline) {
		obs, err := other.Reserve(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if taken = obs.Held; taken == nil {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if taken == nil {
		t.Fatal("the dead reservation still holds the key")
	}
	now := time.Now()
	rec := &idempotency.Record{RecordKey: k, Fingerprint: "f", State: idempotency.StateComplete, StatusCode: 201, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := res.Complete(ctx, rec); err == nil {
		t.Fatal("the abandoned attempt completed")
	}
	if err := taken.Complete(ctx, rec); err != nil {
		t.Fatalf("the new holder could not complete: %v", err)
	}
}

// A handler that outlives its deadline (kept below the lease) cannot complete: its
// transaction ends with the deadline and the key is free for a retry.
func TestHandlerPastItsDeadlineCannotComplete(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *idempotency.Config) {
		c.Lease = 2 * time.Second
		c.HandlerTimeout = 300 * time.Millisecond
	})
	h.gate = make(chan struct{})
	go func() { time.Sleep(600 * time.Millisecond); close(h.gate) }()
	r := h.do(call{key: "too-slow-1", body: `{"name":"late","id":"l1"}`})
	if r.Code < 500 {
		t.Fatalf("late handler: %d %s, want a 5xx", r.Code, r.Body)
	}
	if names := h.names(); len(names) != 0 {
		t.Fatalf("a write past the deadline was committed: %v", names)
	}
	h.gate = nil
	if r := h.do(call{key: "too-slow-1", body: `{"name":"late","id":"l1"}`}); r.Code != 201 || r.Header().Get("Idempotent-Replayed") != "false" {
		t.Fatalf("retry: %d %s, want a fresh execution", r.Code, r.Body)
	}
}
