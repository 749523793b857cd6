package database

import (
	"context"
	"database/sql/driver"
	"errors"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrUnavailable marks an error caused by a store that cannot be reached or is too
// busy to answer: the HTTP edge turns it into 503 STORE_UNAVAILABLE with Retry-After.
var ErrUnavailable = errors.New("store unavailable")

// Classify returns err wrapped with ErrUnavailable when it means the store could not
// be reached (connection refused or lost, server shutting down, SQLite busy or
// locked), and err unchanged otherwise. Classify(nil) is nil.
func Classify(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	if unavailable(err) {
		return &unavailableError{err: err}
	}
	return err
}

type unavailableError struct{ err error }

func (e *unavailableError) Error() string { return "store unavailable: " + e.err.Error() }
func (e *unavailableError) Unwrap() []error {
	return []error{ErrUnavailable, e.err}
}

func unavailable(err error) bool {
	var netErr net.Error
	var pgErr *pgconn.PgError
	var connectErr *pgconn.ConnectError
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	case errors.As(err, &connectErr), errors.As(err, &netErr):
		return true
	case errors.As(err, &pgErr):
		// Class 08: connection exception; 57P01..03: admin shutdown, crash shutdown,
		// cannot connect now; 53300: too many connections.
		return strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "57P") || pgErr.Code == "53300"
	case pgconn.SafeToRetry(err), errors.Is(err, context.DeadlineExceeded) && pgconn.Timeout(err):
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "database is locked") || strings.Contains(msg, "SQLITE_BUSY") ||
		strings.Contains(msg, "sql: database is closed") || strings.Contains(msg, "conn closed")
}
