// Package database opens riskapi's store — embedded SQLite (pure Go, no cgo) or
// PostgreSQL — through GORM, and carries a request's transaction in its context so
// that every store a handler calls writes through it.
//
// It knows nothing of risks or idempotency; domain stores call Conn, and whoever owns
// a unit of work (the idempotency engine) calls WithTx.
package database

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/jackc/pgx/v5/stdlib"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Dialect names the SQL dialect of an open store.
type Dialect string

// The two supported dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// DB is an open store: the GORM handle and its dialect.
type DB struct {
	*gorm.DB
	Dialect Dialect
	// Dir is the data directory (the SQLite file's folder; "data" for PostgreSQL).
	Dir string
	// replica is the pool of Options.ReadURL, or nil.
	replica *sql.DB
}

// Options tunes Open. The zero value is valid.
type Options struct {
	// IdleInTxTimeout, when positive, makes PostgreSQL abort any transaction left
	// idle this long, so a hung or partitioned process cannot hold an idempotency
	// lock past its lease. It is set with SET LOCAL in each transaction's first
	// round trip (BeginStatements), never as a startup parameter, so it holds
	// through a transaction pooler too (docs/deploying.md). Ignored on SQLite, where
	// a dead process's locks vanish with it.
	IdleInTxTimeout time.Duration
	// BusyTimeout bounds how long a SQLite statement waits for the write lock before
	// failing (then 503 STORE_UNAVAILABLE). Optional. Default 15s. riskapi passes half
	// the idempotency lease, so waiting for the lock cannot outlast a handler's
	// deadline. Ignored on PostgreSQL.
	BusyTimeout time.Duration
	// MaxOpenConns bounds the PostgreSQL pool (DATABASE_MAX_CONNS). Optional.
	// Default 32. SQLite's pool is always 16: its writers share one lock.
	MaxOpenConns int
	// ReadURL is DATABASE_READ_URL: a postgres:// URL of a replica the lists read
	// from (replica.go). Optional; PostgreSQL only.
	ReadURL string
	// Pooler is DATABASE_POOLER: PoolerTransaction when the PostgreSQL URLs point at
	// a transaction-mode pooler (PgBouncer), so that no prepared statement outlives
	// its transaction; "" (the default) keeps statements prepared per connection
	// (pooler.go). Ignored on SQLite.
	Pooler string
	// Logger receives the warning that a pooler's prepared-statement error shows
	// Pooler is missing (pooler.go). Optional. Default: silent.
	Logger *slog.Logger
	// Tracing, when set, gives each statement sent through GORM a span inside the
	// request's trace (tracing.go). Optional. Default nil: no callback installed.
	Tracing trace.TracerProvider
}

// Open connects to url: "sqlite://PATH" (relative or absolute; the folder is created)
// or "postgres://…" / "postgresql://…". It does not migrate. Errors name the URL's
// scheme, never its password.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	gcfg := &gorm.Config{
		// Each store call is one statement or its own explicit transaction; GORM's
		// implicit per-Create transaction would only add round trips.
		SkipDefaultTransaction: true,
		Logger:                 logger.Discard,
		NowFunc:                func() time.Time { return time.Now().UTC() },
		TranslateError:         true,
	}
	switch {
	case strings.HasPrefix(url, "sqlite://") && opts.ReadURL != "":
		return nil, fmt.Errorf("DATABASE_READ_URL needs a postgres:// DATABASE_URL")
	case strings.HasPrefix(url, "sqlite://"):
		return openSQLite(ctx, strings.TrimPrefix(url, "sqlite://"), opts, gcfg)
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return openPostgres(ctx, url, opts, gcfg)
	default:
		return nil, fmt.Errorf("DATABASE_URL must start with sqlite:// or postgres://")
	}
}

func openSQLite(ctx context.Context, path string, opts Options, gcfg *gorm.Config) (*DB, error) {
	if path == "" {
		return nil, fmt.Errorf("DATABASE_URL sqlite:// needs a file path")
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory %s: %w", dir, err)
	}
	// WAL lets readers run beside the one writer; IMMEDIATE transactions take the write
	// lock at BEGIN so two writers never deadlock upgrading a read lock; the busy
	// timeout turns writer contention into waiting instead of SQLITE_BUSY.
	busy := 15 * time.Second
	if opts.BusyTimeout > 0 && opts.BusyTimeout < busy {
		busy = opts.BusyTimeout
	}
	dsn := path + "?_pragma=journal_mode(WAL)" + fmt.Sprintf("&_pragma=busy_timeout(%d)", busy.Milliseconds()) +
		"&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_txlock=immediate"
	pool, err := openSQLitePool(dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	gdb, err := gorm.Open(&sqlite.Dialector{DSN: dsn, Conn: pool}, gcfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	if err := registerCallbacks(gdb); err != nil {
		return nil, err
	}
	if err := traceStatements(gdb, opts.Tracing, "sqlite"); err != nil {
		return nil, err
	}
	// Writers queue in arrival order rather than poll the busy handler (writeGate).
	if err := gdb.Use(newWriteGate()); err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	sqlDB, err := gdb.DB()
	if err != nil {
		return nil, err
	}
	sqlDB.SetMaxOpenConns(16)
	sqlDB.SetMaxIdleConns(16)
	if err := sqlDB.PingContext(ctx); err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	return &DB{DB: gdb, Dialect: SQLite, Dir: dir}, nil
}

func openPostgres(ctx context.Context, url string, opts Options, gcfg *gorm.Config) (*DB, error) {
	sqlDB, err := openPool(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	gdb, err := gorm.Open(postgres.New(postgres.Config{Conn: sqlDB}), gcfg)
	if err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("open postgres: %w", Classify(err))
	}
	if err := registerCallbacks(gdb); err != nil {
		return nil, err
	}
	if err := traceStatements(gdb, opts.Tracing, "postgresql"); err != nil {
		return nil, err
	}
	db := &DB{DB: gdb, Dialect: Postgres, Dir: "data"}
	if opts.ReadURL == "" {
		return db, nil
	}
	if db.replica, err = openPool(ctx, opts.ReadURL, opts); err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("DATABASE_READ_URL: %w", err)
	}
	if err := useReplica(gdb, db.replica); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// openPool opens and pings a pool of riskapi's PostgreSQL connections (pooler.go,
// hangup.go) to url.
func openPool(ctx context.Context, url string, opts Options) (*sql.DB, error) {
	pcfg, err := connConfig(url, opts.Pooler)
	if err != nil {
		return nil, err
	}
	pcfg.BuildContextWatcherHandler = newHangUpWatcher
	sqlDB := sql.OpenDB(hangUpConnector{Connector: stdlib.GetConnector(*pcfg), bounds: txBounds(opts),
		pooler: &poolerWarning{log: opts.Logger}})
	n := opts.MaxOpenConns
	if n <= 0 {
		n = 32
	}
	sqlDB.SetMaxOpenConns(n)
	sqlDB.SetMaxIdleConns(n)
	sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := sqlDB.PingContext(pctx); err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("connect to postgres at %s: %w", pcfg.Host, Classify(err))
	}
	return sqlDB, nil
}

// Ping checks that the store answers.
func (db *DB) Ping(ctx context.Context) error {
	sqlDB, err := db.DB.DB()
	if err != nil {
		return err
	}
	return Classify(sqlDB.PingContext(ctx))
}

// CheckWrite checks that the store takes a committed write, which is what serving
// requests needs: it stamps the one row of readiness_probes (migration 0006). A store
// that answers reads but cannot write (SQLite or PostgreSQL on a full disk, a
// read-only replica) fails it. /readyz calls it; ctx bounds it. Errors: classified.
func (db *DB) CheckWrite(ctx context.Context) error {
	res := db.WithContext(ctx).Exec("UPDATE readiness_probes SET checked_at = ? WHERE id = 1", time.Now().UTC())
	if res.Error != nil {
		return fmt.Errorf("readiness write: %w", Classify(res.Error))
	}
	if res.RowsAffected != 1 {
		return fmt.Errorf("readiness write: the probe row is missing (run api migrate)")
	}
	return nil
}

// Close closes the pool, and the replica's.
func (db *DB) Close() error {
	if db.replica != nil {
		db.replica.Close()
	}
	sqlDB, err := db.DB.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}
