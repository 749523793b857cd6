// Package dbtest gives tests a fresh, migrated riskapi database on the store under
// test, chosen by the TEST_DATABASE_URL environment variable:
//
//   - unset or "sqlite": a new SQLite file in the test's temporary directory, a copy
//     of one migrated once per test binary (under -race a migration costs seconds);
//   - postgres://…: a new PostgreSQL database per test on that server (the URL's own
//     database is only used to create and drop them), copied from a migrated
//     template made once per test binary (and dropped by a later binary on the
//     same machine once this one has exited).
//
// The same test suite therefore runs on both stores; .ci/run runs it twice.
//
// With TEST_PGBOUNCER_URL also set (postgres://…, a PgBouncer in front of that
// server), the databases are still made directly, but URL names them through the
// pooler: .ci/run runs the crash and scale-out tests that way (docs/deploying.md).
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/migrations"
)

// EnvVar selects the store under test.
const EnvVar = "TEST_DATABASE_URL"

// PoolerEnvVar names a PgBouncer in front of TEST_DATABASE_URL's server.
const PoolerEnvVar = "TEST_PGBOUNCER_URL"

// Postgres reports whether the tests run against PostgreSQL.
func Postgres() bool {
	return strings.HasPrefix(os.Getenv(EnvVar), "postgres")
}

// Pooled reports whether URL names its databases through PgBouncer.
func Pooled() bool {
	return Postgres() && strings.HasPrefix(os.Getenv(PoolerEnvVar), "postgres")
}

// Pooler is the DATABASE_POOLER setting for URL: database.PoolerTransaction when
// Pooled, else "".
func Pooler() string {
	if Pooled() {
		return database.PoolerTransaction
	}
	return ""
}

// URL returns a DATABASE_URL for a fresh, migrated database, removed when tb ends:
// through the pooler when Pooled.
func URL(tb testing.TB) string {
	tb.Helper()
	u := DirectURL(tb)
	if Pooled() {
		return ViaPooler(tb, u)
	}
	return u
}

// ViaPooler returns the URL of direct's database through TEST_PGBOUNCER_URL's
// PgBouncer, with the pooler's host, port and query. tb fails if none is set.
func ViaPooler(tb testing.TB, direct string) string {
	tb.Helper()
	if !Pooled() {
		tb.Fatalf("%s is not set", PoolerEnvVar)
	}
	d, err := url.Parse(direct)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	return withDatabase(tb, os.Getenv(PoolerEnvVar), strings.TrimPrefix(d.Path, "/"))
}

// DirectURL is URL, never through the pooler.
func DirectURL(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv(EnvVar)
	if !strings.HasPrefix(base, "postgres") {
		path := filepath.Join(tb.TempDir(), "riskapi.db")
		if err := os.WriteFile(path, sqliteTemplate(tb), 0o600); err != nil {
			tb.Fatalf("copy the migrated SQLite template: %v", err)
		}
		return "sqlite://" + path
	}
	return create(tb, base, "TEMPLATE "+template(tb, base))
}

// EmptyURL returns the DATABASE_URL of a new, empty PostgreSQL database (never
// migrated), removed when tb ends: through the pooler when Pooled. tb skips on
// SQLite.
func EmptyURL(tb testing.TB) string {
	tb.Helper()
	if !Postgres() {
		tb.Skip("an empty database is a PostgreSQL one (TEST_DATABASE_URL=postgres://…)")
	}
	u := create(tb, os.Getenv(EnvVar), "")
	if Pooled() {
		return ViaPooler(tb, u)
	}
	return u
}

// create makes a database on base's server with the options of CREATE DATABASE
// given, dropped when tb ends, and returns its direct URL.
func create(tb testing.TB, base, options string) string {
	tb.Helper()
	name := "riskapi_test_" + randomHex(6)
	admin(tb, base, strings.TrimSpace(fmt.Sprintf(`CREATE DATABASE %s %s`, name, options)))
	tb.Cleanup(func() { admin(tb, base, fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, name)) })
	return withDatabase(tb, base, name)
}

// Open returns a fresh, migrated database, closed and removed when tb ends.
func Open(tb testing.TB) *database.DB {
	tb.Helper()
	db, err := database.Open(context.Background(), URL(tb), database.Options{Pooler: Pooler()})
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

var (
	tmplOnce sync.Once
	tmplName string
	tmplErr  error
)

var (
	sqliteOnce  sync.Once
	sqliteBytes []byte
	sqliteErr   error
)

// sqliteTemplate migrates one SQLite database per test binary and returns its file's
// bytes, its WAL checkpointed into them; each test writes them to a file of its own.
// The template's folder is removed at once, so nothing outlives the binary.
func sqliteTemplate(tb testing.TB) []byte {
	tb.Helper()
	sqliteOnce.Do(func() {
		dir, err := os.MkdirTemp("", "riskapi-dbtest-")
		if err != nil {
			sqliteErr = err
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "riskapi.db")
		db, err := database.Open(context.Background(), "sqlite://"+path, database.Options{})
		if err != nil {
			sqliteErr = err
			return
		}
		if _, sqliteErr = migrations.Apply(context.Background(), db); sqliteErr == nil {
			sqliteErr = db.Exec("PRAGMA wal_checkpoint(TRUNCATE)").Error
		}
		if err := db.Close(); sqliteErr == nil {
			sqliteErr = err
		}
		if sqliteErr == nil {
			sqliteBytes, sqliteErr = os.ReadFile(path)
		}
	})
	if sqliteErr != nil {
		tb.Fatalf("create the SQLite template: %v", sqliteErr)
	}
	return sqliteBytes
}

// template migrates one database per test binary and returns its name; every test
// database is a cheap copy of it. A test binary has no hook at its end, so the
// template outlives it; the next binary on the same machine drops the templates of
// binaries that have exited (sweepTemplates).
func template(tb testing.TB, base string) string {
	tb.Helper()
	tmplOnce.Do(func() {
		sweepTemplates(base)
		tmplName = fmt.Sprintf("%s%d_%s", tmplPrefix, os.Getpid(), randomHex(4))
		if tmplErr = adminErr(base, `CREATE DATABASE `+tmplName); tmplErr != nil {
			return
		}
		var db *database.DB
		u := withDatabase(tb, base, tmplName)
		if db, tmplErr = database.Open(context.Background(), u, database.Options{}); tmplErr != nil {
			return
		}
		_, tmplErr = migrations.Apply(context.Background(), db)
		db.Close()
	})
	if tmplErr != nil {
		tb.Fatalf("create template database: %v", tmplErr)
	}
	return tmplName
}

func withDatabase(tb testing.TB, base, name string) string {
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("%s: %v", EnvVar, err)
	}
	u.Path = "/" + name
	return u.String()
}

func admin(tb testing.TB, base, stmt string) {
	tb.Helper()
	if err := adminErr(base, stmt); err != nil {
		tb.Fatalf("%s: %v", stmt, err)
	}
}

func adminErr(base, stmt string) error {
	db, err := database.Open(context.Background(), base, database.Options{MaxOpenConns: 1})
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Exec(stmt).Error
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// tmplPrefix starts a template's name; the test binary's process id and a random
// suffix follow (riskapi_tmpl_<pid>_<8 hex>).
const tmplPrefix = "riskapi_tmpl_"

// sweepTemplates drops the templates left by test binaries of this machine that have
// exited, best effort: only on a server on this machine (a process id means nothing
// on another), and a template in use cannot be dropped (no FORCE), so a race with a
// binary still copying one loses nothing.
func sweepTemplates(base string) {
	u, err := url.Parse(base)
	if err != nil || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost" && u.Hostname() != "::1") {
		return
	}
	if _, err := os.Stat("/proc/self"); err != nil {
		return // no /proc to ask whether a process runs
	}
	db, err := database.Open(context.Background(), base, database.Options{MaxOpenConns: 1})
	if err != nil {
		return
	}
	defer db.Close()
	var names []string
	if db.Raw(`SELECT datname FROM pg_database WHERE datname LIKE 'riskapi\_tmpl\_%'`).Scan(&names).Error != nil {
		return
	}
	for _, name := range names {
		pid, _, ok := strings.Cut(strings.TrimPrefix(name, tmplPrefix), "_")
		if !ok || strings.Trim(pid, "0123456789") != "" {
			continue // not of this naming
		}
		if _, err := os.Stat("/proc/" + pid); err == nil {
			continue // its binary still runs (or the id was reused: it waits for a later sweep)
		}
		db.Exec(`DROP DATABASE IF EXISTS ` + name)
	}
}
