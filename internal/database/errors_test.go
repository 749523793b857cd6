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
// for a COMMIT or a write outside a transaction, when its outcome is unknown. The
// real faults (killed backends, cut and frozen connections, full disks) are in
// internal/server's storefault and diskfull tests; this pins the table.
func TestClassify(t *testing.T) {
	t.Parallel()
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	tests := []struct {
		name                 string
		err                  error
		unavailable, unknown bool
	}{
		{"backend gone mid-answer", fmt.Errorf("query: %w", io.ErrUnexpectedEOF), true, true},
		{"pgx closed connection", errors.New("conn closed"), true, true},
		{"connection reset", reset, true, true},
		{"terminated backend", &pgconn.PgError{Code: "57P01"}, true, false},
		{"connection exception", &pgconn.PgError{Code: "08006"}, true, false},
		{"PostgreSQL disk full", &pgconn.PgError{Code: "53100"}, true, false},
		{"write refused by a standby", &pgconn.PgError{Code: "25006"}, true, false},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false, false},
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
