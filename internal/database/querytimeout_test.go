package database_test

import (
	"context"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
)

// A read that runs past its query timeout is cancelled in the store — SQLite's
// statement interrupted, PostgreSQL's cancelled on the server, not left running —
// QueryTimedOut says so, and the connection it ran on serves the next read.
func TestQueryTimeoutCancelsTheStatementInTheStore(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	sqlDB, err := db.DB.DB()
	if err != nil {
		t.Fatal(err)
	}
	// One connection: the next read must run on the one the slow read used.
	sqlDB.SetMaxOpenConns(1)
	long := `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT COUNT(*) FROM n`
	if dbtest.Postgres() {
		long = `SELECT pg_sleep(60)`
	}
	var pid int
	if dbtest.Postgres() {
		if err := db.Raw(`SELECT pg_backend_pid()`).Scan(&pid).Error; err != nil {
			t.Fatal(err)
		}
	}
	const timeout = 200 * time.Millisecond
	ctx := database.WithQueryTimeout(database.WithCallTimeout(context.Background(), 30*time.Second), timeout)
	start := time.Now()
	var n int64
	err = database.Conn(ctx, db.DB).Raw(long).Scan(&n).Error
	took := time.Since(start)
	if err == nil {
		t.Fatal("the endless read returned")
	}
	if !database.QueryTimedOut(ctx) {
		t.Errorf("QueryTimedOut = false after %v (%v)", took, err)
	}
	if took > 10*time.Second {
		t.Errorf("the read was given up after %v, its timeout %v", took, timeout)
	}
	// The connection serves the next read.
	var one int
	if err := db.WithContext(context.Background()).Raw(`SELECT 1`).Scan(&one).Error; err != nil || one != 1 {
		t.Fatalf("the next read: %d, %v", one, err)
	}
	if !dbtest.Postgres() {
		return
	}
	var again int
	if err := db.Raw(`SELECT pg_backend_pid()`).Scan(&again).Error; err != nil {
		t.Fatal(err)
	}
	if again != pid {
		t.Errorf("the connection was replaced (backend %d, then %d): the cancelled read broke it", pid, again)
	}
	// Nothing of it still runs on the server (a second connection looks).
	sqlDB.SetMaxOpenConns(2)
	var running int
	if err := db.Raw(`SELECT COUNT(*) FROM pg_stat_activity WHERE query = $1 AND state = 'active'`, long).
		Scan(&running).Error; err != nil {
		t.Fatal(err)
	}
	if running != 0 {
		t.Errorf("%d cancelled reads still run on the server", running)
	}
	// A read within its timeout is not marked.
	ok := database.WithQueryTimeout(context.Background(), time.Minute)
	if err := database.Conn(ok, db.DB).Raw(`SELECT 1`).Scan(&one).Error; err != nil || database.QueryTimedOut(ok) {
		t.Errorf("a quick read: %v, timed out %v", err, database.QueryTimedOut(ok))
	}
}
