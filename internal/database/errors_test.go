package database_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/riskapi/riskapi/internal/database"
)

// TestClassify: what counts as a temporary store failure (503 STORE_UNAVAILABLE) and,
// for a COMMIT or a write outside a transaction, when its outcome is unknown: only
// PostgreSQL's own refusal of the statement (an error it raised, naming its
// routine) or a failure before anything was sent is surely not committed; an error
// of the connection, of a server going down, or of a pooler (no routine: PgBouncer
// sends none) after the statement was sent is unknown (docs/errors.md). The real
// faults (killed backends, cut and frozen connections, full disks, PostgreSQL
// stopped behind PgBouncer) are in internal/server's storefault and diskfull tests
// and internal/e2e's TestPoolerFaults; this pins the table.
func TestClassify(t *testing.T) {
	t.Parallel()
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	// postgres is an error as PostgreSQL sends it; pooler as PgBouncer 1.18 does.
	postgres := func(severity, code, routine string) error {
		return &pgconn.PgError{Severity: severity, SeverityUnlocalized: severity, Code: code, File: "postgres.c", Routine: routine}
	}
	pooler := func(code, msg string) error { return &pgconn.PgError{Severity: "FATAL", Code: code, Message: msg} }
	tests := []struct {
		name                 string
		err                  error
		unavailable, unknown bool
	}{
		{"backend gone mid-answer", fmt.Errorf("query: %w", io.ErrUnexpectedEOF), true, true},
		{"pgx closed connection", errors.New("conn closed"), true, true},
		{"connection reset", reset, true, true},
		{"terminated backend", postgres("FATAL", "57P01", "ProcessInterrupts"), true, true},
		{"immediate shutdown", postgres("FATAL", "57P02", "quickdie"), true, true},
		{"connection exception", postgres("FATAL", "08006", "SocketBackend"), true, true},
		{"PgBouncer: server conn crashed?", pooler("08P01", "server conn crashed?"), true, true},
		{"PgBouncer: server login failing", pooler("08P01", "server login has been failing, try again later (server_login_retry)"), true, true},
		{"PgBouncer: query_wait_timeout", pooler("08P01", "query_wait_timeout"), true, true},
		{"a pooler's FATAL of another SQLSTATE", pooler("53300", "no more connections allowed (max_client_conn)"), true, true},
		{"PostgreSQL disk full", postgres("ERROR", "53100", "mdextend"), true, false},
		{"write refused by a standby", postgres("ERROR", "25006", "PreventCommandIfReadOnly"), true, false},
		{"prepared statement missing (a pooler without DATABASE_POOLER)", postgres("ERROR", "26000", "FetchPreparedStatement"), true, false},
		{"prepared statement already exists", postgres("ERROR", "42P05", "StorePreparedStatement"), true, false},
		{"unique violation", postgres("ERROR", "23505", "_bt_check_unique"), false, false},
		{"serialization failure", postgres("ERROR", "40001", "PreCommit_CheckForSerializationFailure"), false, false},
		{"pool wait past the call deadline", context.DeadlineExceeded, true, false},
		{"bad pooled connection", driver.ErrBadConn, true, false},
		{"SQLite busy", errors.New("database is locked (5) (SQLITE_BUSY)"), true, false},
		{"SQLite full", errors.New("database or disk is full (13)"), true, false},
		{"upload disk full", &fs.PathError{Op: "write", Path: "/x", Err: syscall.ENOSPC}, true, false},
		{"client went away", context.Canceled, false, false},
		{"anything else", errors.New("boom"), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errors.Is(database.Classify(tt.err), database.ErrUnavailable); got != tt.unavailable {
				t.Errorf("Classify: unavailable = %v, want %v", got, tt.unavailable)
			}
			c := database.CommitFailed(tt.err)
			if got := errors.Is(c, database.ErrOutcomeUnknown); got != tt.unknown {
				t.Errorf("CommitFailed: unknown = %v, want %v (%v)", got, tt.unknown, c)
			}
			if errors.Is(c, database.ErrOutcomeUnknown) && !errors.Is(c, database.ErrUnavailable) {
				t.Errorf("unknown without unavailable: %v", c)
			}
		})
	}
}
