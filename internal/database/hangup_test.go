package database_test

import (
	"context"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
)

// TestHangUpKeepsTheConnection: a client hanging up while its request's statement
// runs on PostgreSQL does not cost the pool its connection. pgx's default broke the
// connection of every cancelled statement, so a flood of hang-ups (no credential
// needed) became a flood of reconnects; now the statement finishes within its call
// timeout on the same backend, and a statement the request would send after the
// hang-up is not sent: the transaction it belonged to is rolled back whole.
func TestHangUpKeepsTheConnection(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("SQLite runs in the process: a cancelled statement costs no connection")
	}
	t.Parallel()
	db := dbtest.Open(t)
	sqlDB, err := db.DB.DB()
	if err != nil {
		t.Fatal(err)
	}
	sqlDB.SetMaxOpenConns(1) // one backend: its pid says whether the pool reconnected
	if err := db.Exec("CREATE TABLE hangup_notes (id TEXT PRIMARY KEY)").Error; err != nil {
		t.Fatal(err)
	}
	before := backendPID(t, db)

	client, hangUp := context.WithCancel(context.Background())
	ctx := database.WithCallTimeout(client, 10*time.Second) // as the HTTP server marks a request
	time.AfterFunc(100*time.Millisecond, hangUp)
	_ = db.WithContext(ctx).Exec("SELECT pg_sleep(0.5)").Error // its result reaches nobody
	if after := backendPID(t, db); after != before {
		t.Fatalf("backend %d after a hang-up mid-statement, want the pool's connection (%d) kept", after, before)
	}

	client, hangUp = context.WithCancel(context.Background())
	ctx = database.WithCallTimeout(client, 10*time.Second)
	err = database.RunInTx(ctx, db.DB, func(ctx context.Context) error {
		if err := database.Conn(ctx, db.DB).Exec("INSERT INTO hangup_notes (id) VALUES ('first')").Error; err != nil {
			return err
		}
		hangUp()
		return database.Conn(ctx, db.DB).Exec("INSERT INTO hangup_notes (id) VALUES ('second')").Error
	})
	if err == nil {
		t.Fatal("a write whose client hung up between two statements committed; want it rolled back")
	}
	var n int64
	if err := db.Table("hangup_notes").Count(&n).Error; err != nil || n != 0 {
		t.Fatalf("%d rows (%v) after a write whose client hung up half-way, want none", n, err)
	}
	if after := backendPID(t, db); after != before {
		t.Fatalf("backend %d after a hang-up between statements, want %d kept", after, before)
	}

	// Its own deadline still ends a statement at once.
	ctx, cancel := context.WithTimeout(database.WithCallTimeout(context.Background(), 10*time.Second), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := db.WithContext(ctx).Exec("SELECT pg_sleep(2)").Error; err == nil {
		t.Fatal("a statement outlived its deadline")
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("a statement past its deadline ran %v, want it ended at the deadline", took)
	}
}

func backendPID(t *testing.T, db *database.DB) int {
	t.Helper()
	var pid int
	if err := db.Raw("SELECT pg_backend_pid()").Scan(&pid).Error; err != nil {
		t.Fatal(err)
	}
	return pid
}
