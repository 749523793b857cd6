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

// TestSQLiteKeyedWriteTakesTheLockAtItsFirstStatement: on SQLite a keyed write's
// handler decodes and checks its request before it writes, and other writers are not
// kept waiting meanwhile: between Begin and the handler's first statement another
// write goes through at once. From that statement until the commit the keyed write
// holds the single write lock, and the other writer waits its turn.
func TestSQLiteKeyedWriteTakesTheLockAtItsFirstStatement(t *testing.T) {
	if dbtest.Postgres() {
		t.Skip("PostgreSQL has no write gate: its transaction begins in Reserve")
	}
	t.Parallel()
	db := dbtest.Open(t)
	if err := db.Exec(`CREATE TABLE notes (id text PRIMARY KEY)`).Error; err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	k := idempotency.RecordKey{Scope: "s", Method: "POST", Path: "/notes", Key: "pending-1"}
	obs, err := gormstore.New(db).Reserve(ctx, k)
	if err != nil || obs.Held == nil {
		t.Fatalf("reserve: %+v, %v", obs, err)
	}
	tctx, err := obs.Held.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other := func(id string) error {
		wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		return db.WithContext(wctx).Exec(`INSERT INTO notes (id) VALUES (?)`, id).Error
	}
	if err := other("before-first-statement"); err != nil {
		t.Fatalf("a write while the keyed handler prepares: %v; want it through at once", err)
	}
	if err := database.Conn(tctx, db.DB).Exec(`INSERT INTO notes (id) VALUES ('keyed')`).Error; err != nil {
		t.Fatal(err)
	}
	if err := other("during-the-transaction"); err == nil {
		t.Fatal("a write went through while the keyed write held the lock")
	}
	now := time.Now()
	rec := &idempotency.Record{RecordKey: k, Fingerprint: "f", State: idempotency.StateComplete, StatusCode: 201,
		CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := obs.Held.Complete(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if err := other("after-the-commit"); err != nil {
		t.Fatalf("a write after the commit: %v", err)
	}
	var n int64
	db.Table("notes").Count(&n)
	if n != 3 {
		t.Fatalf("%d notes, want 3 (before, keyed, after)", n)
	}
}
