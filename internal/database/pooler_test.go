package database_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
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
	db, err := database.Open(ctx, dbtest.URL(t), database.Options{IdleInTxTimeout: 400 * time.Millisecond, MaxOpenConns: 1,
		Pooler: dbtest.Pooler()})
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

// TestNoNamedPreparedStatements: with DATABASE_POOLER=transaction riskapi's
// statements leave no named prepared statement on the server connection, so none
// has to survive a transaction pooler's switching connections between transactions
// (docs/deploying.md); a URL that asks for pgx's statement cache gets it even so.
func TestNoNamedPreparedStatements(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("prepared statements on a PostgreSQL connection")
	}
	t.Parallel()
	base := dbtest.DirectURL(t)
	if n := preparedOnConnection(t, withQuery(base, "?sslmode=disable"), database.PoolerTransaction); n != 0 {
		t.Errorf("DATABASE_POOLER=transaction: %d named prepared statements on the connection, want 0", n)
	}
	if n := preparedOnConnection(t, withQuery(base, "?sslmode=disable&default_query_exec_mode=cache_statement"),
		database.PoolerTransaction); n == 0 {
		t.Errorf("DATABASE_POOLER=transaction with a URL asking for the statement cache: no prepared statement, want its cache")
	}
}

// TestDirectConnectionsPrepareStatements: with DATABASE_POOLER unset, the default,
// riskapi keeps its statements prepared on each connection (pgx's statement cache:
// parsed and planned once, then executed by name), the fastest mode talking to
// PostgreSQL directly (docs/deploying.md).
func TestDirectConnectionsPrepareStatements(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("prepared statements on a PostgreSQL connection")
	}
	t.Parallel()
	if n := preparedOnConnection(t, dbtest.DirectURL(t), ""); n == 0 {
		t.Errorf("DATABASE_POOLER unset: no named prepared statement on the connection, want the statement kept prepared")
	}
}

// preparedOnConnection opens url with one connection and the given pooler
// setting, sends a statement with a parameter three times, and returns how many
// named prepared statements the connection then holds.
func preparedOnConnection(t *testing.T, url, pooler string) int64 {
	t.Helper()
	db, err := database.Open(context.Background(), url, database.Options{MaxOpenConns: 1, Pooler: pooler})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	for range 3 {
		if err := db.Raw("SELECT count(*) FROM tenants WHERE id = ?", "ten_x").Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Raw("SELECT count(*) FROM pg_prepared_statements").Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
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

// TestPoolerWithoutSettingIsNamed: a prepared statement that goes missing between
// uses — what a transaction-mode pooler does to pgx's statement cache when
// DATABASE_POOLER is unset, here done by DEALLOCATE ALL on the same session — fails
// the write with a true answer (503, not executed: the statement was refused, and
// nothing was written), logs one warning naming DATABASE_POOLER=transaction however
// often it happens within a minute, and the next write succeeds.
func TestPoolerWithoutSettingIsNamed(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("pgx's statement cache on one direct PostgreSQL session")
	}
	t.Parallel()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, nil))
	db, err := database.Open(context.Background(), dbtest.DirectURL(t), database.Options{MaxOpenConns: 1, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Exec("CREATE TABLE pooler_notes (id TEXT PRIMARY KEY)").Error; err != nil {
		t.Fatal(err)
	}
	write := func(id string) error {
		ctx := database.WithCallTimeout(context.Background(), 5*time.Second)
		return database.RunInTx(ctx, db.DB, func(ctx context.Context) error {
			return database.ExecLast(ctx, db.DB, func(int64) {}, "INSERT INTO pooler_notes (id) VALUES (?)", id)
		})
	}
	for i := range 2 {
		if err := write(fmt.Sprintf("prepared-%d", i)); err != nil { // prepares the statement (again)
			t.Fatal(err)
		}
		if err := db.Exec("DEALLOCATE ALL").Error; err != nil {
			t.Fatal(err)
		}
		err := write(fmt.Sprintf("lost-%d", i))
		if !errors.Is(err, database.ErrUnavailable) || errors.Is(err, database.ErrOutcomeUnknown) {
			t.Errorf("lost-%d: the write's prepared statement gone: %v; want ErrUnavailable, outcome not unknown", i, err)
		}
	}
	if err := write("after"); err != nil {
		t.Errorf("the write after the warning: %v", err)
	}
	var ids []string
	if err := db.Table("pooler_notes").Order("id").Pluck("id", &ids).Error; err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{"after", "prepared-0", "prepared-1"}) {
		t.Errorf("rows %v, want only the writes answered as done", ids)
	}
	if n := strings.Count(logs.String(), "DATABASE_POOLER=transaction"); n != 1 {
		t.Errorf("%d warnings naming DATABASE_POOLER=transaction, want 1:\n%s", n, logs.String())
	}
}

// syncWriter serializes writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
