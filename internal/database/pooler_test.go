package database_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
)

// TestTransactionsCarryTheirOwnBounds: the abandoned-transaction bound is set in
// each transaction (SET LOCAL, docs/deploying.md), never on the session, so it holds
// on whichever server connection a transaction pooler gives, and leaves nothing
// behind on it. A transaction left idle past the bound is ended by the server; the
// pool serves on. Run through PgBouncer too (TEST_PGBOUNCER_URL, .ci/run).
func TestTransactionsCarryTheirOwnBounds(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("PostgreSQL's idle-in-transaction bound; SQLite's locks end with the process")
	}
	t.Parallel()
	ctx := context.Background()
	db, err := database.Open(ctx, dbtest.URL(t), database.Options{IdleInTxTimeout: 400 * time.Millisecond, MaxOpenConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	show := func(c *gorm.DB) string {
		var v string
		if err := c.Raw("SHOW idle_in_transaction_session_timeout").Scan(&v).Error; err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := show(db.DB); v != "0" {
		t.Errorf("outside a transaction the session's bound is %q, want 0 (no session state)", v)
	}
	err = database.RunInTx(ctx, db.DB, func(ctx context.Context) error {
		if v := show(database.Conn(ctx, db.DB)); v != "400ms" {
			t.Errorf("inside RunInTx the bound is %q, want 400ms", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if v := pipelinedBound(t, db); v != "400ms" {
		t.Errorf("in a transaction begun by BeginStatements the bound is %q, want 400ms", v)
	}

	tx := db.Begin()
	if err := tx.Exec("SELECT 1").Error; err != nil {
		t.Fatal(err)
	}
	time.Sleep(1200 * time.Millisecond) // the process hangs inside its transaction
	if err := tx.Exec("SELECT 1").Error; err == nil {
		t.Fatal("a transaction idle past its bound still answered; want it ended by the server")
	}
	tx.Rollback()
	if err := db.Exec("SELECT 1").Error; err != nil {
		t.Fatalf("the pool after an abandoned transaction: %v", err)
	}
}

// pipelinedBound begins a transaction as the idempotency reservation does (its
// BEGIN statements in a pipeline) and returns the bound it carries.
func pipelinedBound(t *testing.T, db *database.DB) string {
	t.Helper()
	sqlDB, err := db.DB.DB()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sqlDB.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var v string
	err = conn.Raw(func(dc any) error {
		b := &pgx.Batch{}
		for _, q := range database.BeginStatements(dc) {
			b.Queue(q)
		}
		b.Queue("SHOW idle_in_transaction_session_timeout").QueryRow(func(r pgx.Row) error { return r.Scan(&v) })
		b.Queue("ROLLBACK")
		return database.PgxConn(dc).SendBatch(context.Background(), b).Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestNoNamedPreparedStatements: riskapi's statements leave no named prepared
// statement on the server connection, so none has to survive a transaction
// pooler's switching connections between transactions (docs/deploying.md); a URL
// that asks for pgx's statement cache gets it.
func TestNoNamedPreparedStatements(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("prepared statements on a PostgreSQL connection")
	}
	t.Parallel()
	ctx := context.Background()
	base := dbtest.DirectURL(t)
	for _, c := range []struct {
		query string
		want  func(int64) bool
	}{
		{"?sslmode=disable", func(n int64) bool { return n == 0 }},
		{"?sslmode=disable&default_query_exec_mode=cache_statement", func(n int64) bool { return n > 0 }},
	} {
		db, err := database.Open(ctx, withQuery(base, c.query), database.Options{MaxOpenConns: 1})
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for range 3 {
			if err := db.Raw("SELECT count(*) FROM tenants WHERE id = ?", "ten_x").Scan(&n).Error; err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Raw("SELECT count(*) FROM pg_prepared_statements").Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		if !c.want(n) {
			t.Errorf("URL %s: %d named prepared statements on the connection", c.query, n)
		}
		db.Close()
	}
}

// withQuery replaces u's query string with query (which starts with "?").
func withQuery(u, query string) string {
	for i := range u {
		if u[i] == '?' {
			return u[:i] + query
		}
	}
	return u + query
}

// TestMultiHostURL: a DATABASE_URL naming several hosts with
// target_session_attrs=read-write connects to the one that takes writes, past a
// host that does not answer — what reaching a new primary after a failover needs
// (docs/deploying.md, Failover).
func TestMultiHostURL(t *testing.T) {
	if !dbtest.Postgres() || dbtest.Pooled() {
		t.Skip("several PostgreSQL hosts, reached directly")
	}
	t.Parallel()
	u, err := url.Parse(dbtest.DirectURL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Host = "127.0.0.1:1," + u.Host // nothing listens on port 1
	q := u.Query()
	q.Set("target_session_attrs", "read-write")
	u.RawQuery = q.Encode()
	db, err := database.Open(context.Background(), u.String(), database.Options{MaxOpenConns: 1})
	if err != nil {
		t.Fatalf("open %s: %v", u.Redacted(), err)
	}
	defer db.Close()
	if err := db.CheckWrite(context.Background()); err != nil {
		t.Fatalf("a write through the multi-host URL: %v", err)
	}
}
