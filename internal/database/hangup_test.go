package database_test

import (
	"context"
	"database/sql/driver"
	"errors"
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
// hang-up is not sent: the transaction it belonged to is rolled back whole, and a
// statement handed to the driver as the client hangs up is not sent either.
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

	// A hang-up just as a statement is handed to the driver: pgx sends nothing, and
	// the connection, still healthy, stays in the pool.
	conn, err := sqlDB.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	gone, hangUp := context.WithCancel(context.Background())
	hangUp()
	if _, err := conn.ExecContext(gone, "SELECT 1"); !errors.Is(err, context.Canceled) {
		t.Errorf("a statement handed over after the hang-up: %v, want context.Canceled", err)
	}
	conn.Close()
	if after := backendPID(t, db); after != before {
		t.Fatalf("backend %d after a hang-up as a statement was handed over, want %d kept", after, before)
	}

	// A hang-up just as database/sql checks a connection idle for over a second
	// before reuse (a ping pgx does not send): the connection is not reported bad.
	conn, err = sqlDB.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	err = conn.Raw(func(dc any) error {
		time.Sleep(1100 * time.Millisecond)
		return dc.(driver.SessionResetter).ResetSession(gone)
	})
	conn.Close()
	if errors.Is(err, driver.ErrBadConn) {
		t.Errorf("a check of an idle connection as its client hung up: %v; database/sql would close the connection", err)
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

// TestCancelledStatementIsRecognised: a statement stopped because its context was
// cancelled is told apart from a store failure on both stores — SQLite's driver
// answers "interrupted (9)", which wraps nothing — so that the HTTP edge logs a
// client's hang-up as 499, not as a 500 or 503 at ERROR.
func TestCancelledStatementIsRecognised(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	long := "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000000) SELECT count(*) FROM n"
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	err := db.WithContext(ctx).Exec(long).Error
	if !database.Cancelled(err) {
		t.Fatalf("a statement whose context was cancelled: %v, want it recognised as cancelled", err)
	}
	if database.Cancelled(errors.New("database is locked")) || database.Cancelled(nil) {
		t.Fatal("a store failure was taken for a cancellation")
	}
}
