package gormstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/idempotency/gormstore"
)

// TestPeekSeesProcessingWithoutTakingTheLock: while a reservation holds a key, Peek
// — from the same store, and on PostgreSQL from another instance's pool — reports
// it held at once, and the holder still owns the key (Peek took nothing). After the
// commit Peek reports the COMPLETE record and no lock.
func TestPeekSeesProcessingWithoutTakingTheLock(t *testing.T) {
	t.Parallel()
	url := dbtest.URL(t)
	ctx := context.Background()
	open := func() *gormstore.Store {
		db, err := database.Open(ctx, url, database.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return gormstore.New(db)
	}
	holder := open()
	peekers := []*gormstore.Store{holder}
	if dbtest.Postgres() {
		peekers = append(peekers, open()) // another instance
	}
	k := idempotency.RecordKey{Scope: "ten_a", Method: "POST", Path: "/v2/risks", Key: "peek-key-1"}
	other := k
	other.Key = "peek-key-2"

	obs, err := holder.Reserve(ctx, k)
	if err != nil || obs.Held == nil {
		t.Fatalf("reserve: %+v, %v", obs, err)
	}
	res := obs.Held
	if _, err := res.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	// On PostgreSQL more held keys, so that lock ids of both signs are checked (the
	// id's top bit is its hash's); SQLite holds one reservation at a time.
	for i := range 8 * len(peekers[1:]) {
		more := k
		more.Key = fmt.Sprintf("peek-more-%d", i)
		o, err := holder.Reserve(ctx, more)
		if err != nil || o.Held == nil {
			t.Fatalf("reserve %s: %+v, %v", more.Key, o, err)
		}
		defer o.Held.Release()
		for j, p := range peekers {
			if _, locked, err := p.Peek(ctx, more); err != nil || !locked {
				t.Errorf("peeker %d: held key %s reads locked=%v (%v)", j, more.Key, locked, err)
			}
		}
	}
	for i, p := range peekers {
		// A Peek that waited for the lock would hang here: the holder is this goroutine.
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		rec, locked, err := p.Peek(pctx, k)
		cancel()
		if err != nil || !locked || rec != nil {
			t.Errorf("peeker %d while held: rec %v, locked %v, err %v; want no record, locked", i, rec, locked, err)
		}
		if _, locked, err := p.Peek(ctx, other); err != nil || locked {
			t.Errorf("peeker %d: another key reads locked=%v (%v)", i, locked, err)
		}
	}
	now := time.Now().UTC()
	rec := &idempotency.Record{RecordKey: k, Fingerprint: "fp", State: idempotency.StateComplete, StatusCode: 201,
		ContentType: "application/json", Body: []byte(`{}`), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	// Peek took no lock: the holder still completes.
	if err := res.Complete(ctx, rec); err != nil {
		t.Fatalf("complete after peeks: %v", err)
	}
	for i, p := range peekers {
		got, locked, err := p.Peek(ctx, k)
		if err != nil || locked || got == nil || got.State != idempotency.StateComplete || got.StatusCode != 201 {
			t.Errorf("peeker %d after commit: rec %+v, locked %v, err %v", i, got, locked, err)
		}
	}
}
