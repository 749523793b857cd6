package database_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
)

// A read's transaction carries PostgreSQL's own deadline (SET LOCAL statement_timeout,
// its query timeout plus a second: docs/register.md, Costly reads), so the server stops
// the read even when the client's cancel request cannot reach it; a write's
// transaction and the session keep none. A statement the server cancels at it is a
// query timeout (503 QUERY_TIMEOUT), as one the client's deadline ends.
func TestReadTransactionsCarryAServerDeadline(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("PostgreSQL's statement_timeout; SQLite's interruption is shown by TestQueryTimeoutCancelsTheStatementInTheStore")
	}
	t.Parallel()
	db := dbtest.Open(t)
	sqlDB, err := db.DB.DB()
	if err != nil {
		t.Fatal(err)
	}
	sqlDB.SetMaxOpenConns(1) // every transaction below runs on the same connection
	show := func(c *gorm.DB) string {
		var v string
		if err := c.Raw("SHOW statement_timeout").Scan(&v).Error; err != nil {
			t.Fatal(err)
		}
		return v
	}
	read := database.WithQueryTimeout(database.WithCallTimeout(context.Background(), 30*time.Second), 2*time.Second)
	err = database.RunInTx(read, db.DB, func(ctx context.Context) error {
		if v := show(database.Conn(ctx, db.DB)); v != "3s" {
			t.Errorf("a read's transaction has statement_timeout %q, want 3s", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	write := database.WithCallTimeout(context.Background(), 30*time.Second)
	err = database.RunInTx(write, db.DB, func(ctx context.Context) error {
		if v := show(database.Conn(ctx, db.DB)); v != "0" {
			t.Errorf("a write's transaction has statement_timeout %q, want 0", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if v := show(db.DB); v != "0" {
		t.Errorf("after a read's transaction the session has statement_timeout %q, want 0", v)
	}

	// The server's cancellation is a query timeout.
	ctx := database.WithQueryTimeout(context.Background(), time.Minute)
	err = database.RunInTx(ctx, db.DB, func(ctx context.Context) error {
		c := database.Conn(ctx, db.DB)
		if err := c.Exec("SET LOCAL statement_timeout = 100").Error; err != nil {
			return err
		}
		return c.Exec("SELECT pg_sleep(30)").Error
	})
	if err == nil || !database.QueryTimedOut(ctx) {
		t.Errorf("a read the server cancelled: %v, QueryTimedOut %v", err, database.QueryTimedOut(ctx))
	}
}

// A read past its query timeout is cut off in the store on its own: the writes and
// reads running beside it on the same pool go on, and none waits for it.
func TestReadPastItsDeadlineLeavesTheOtherWorkRunning(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	if err := db.Exec(`CREATE TABLE fair_probe (id INTEGER PRIMARY KEY, v TEXT)`).Error; err != nil {
		t.Fatal(err)
	}
	long := `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT COUNT(*) FROM n`
	if dbtest.Postgres() {
		long = `SELECT COUNT(*) FROM generate_series(1, 1000000000)`
	}
	const timeout = time.Second
	slow := database.WithQueryTimeout(database.WithCallTimeout(context.Background(), 30*time.Second), timeout)
	var wg sync.WaitGroup
	var slowErr error
	var slowTook time.Duration
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		// One statement on its own, as a GET's reads are (on SQLite a transaction
		// would queue at the write gate).
		var n int64
		slowErr = database.Conn(slow, db.DB).Raw(long).Scan(&n).Error
		slowTook = time.Since(start)
	}()
	time.Sleep(50 * time.Millisecond) // the slow read is running
	other := database.WithCallTimeout(context.Background(), 30*time.Second)
	var worst time.Duration
	for i := 0; i < 20; i++ {
		start := time.Now()
		err := database.RunInTx(other, db.DB, func(ctx context.Context) error {
			return database.Conn(ctx, db.DB).Exec(`INSERT INTO fair_probe (id, v) VALUES (?, 'x')`, i).Error
		})
		if err != nil {
			t.Fatalf("write %d beside the slow read: %v", i, err)
		}
		var n int64
		if err := db.WithContext(database.WithQueryTimeout(other, timeout)).Raw(`SELECT COUNT(*) FROM fair_probe`).Scan(&n).Error; err != nil || n != int64(i+1) {
			t.Fatalf("read %d beside the slow read: %d, %v", i, n, err)
		}
		worst = max(worst, time.Since(start))
	}
	wg.Wait()
	if slowErr == nil || !database.QueryTimedOut(slow) {
		t.Fatalf("the endless read: %v, QueryTimedOut %v", slowErr, database.QueryTimedOut(slow))
	}
	if errors.Is(slowErr, context.Canceled) {
		t.Errorf("the endless read ended by cancellation, not its deadline: %v", slowErr)
	}
	if slowTook > 5*time.Second {
		t.Errorf("the endless read was cut after %v, its timeout %v", slowTook, timeout)
	}
	if worst > timeout {
		t.Errorf("a write and read beside it took %v: they waited for the slow read (timeout %v)", worst, timeout)
	}
	t.Logf("slow read cut after %v; the other work's worst write+read %v", slowTook, worst)
}
