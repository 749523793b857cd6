package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrUnavailable marks an error caused by a store that cannot be reached, is too
// busy to answer, or has no room left (a full disk): the HTTP edge turns it into
// 503 STORE_UNAVAILABLE with Retry-After. All are temporary as far as a client can
// tell; docs/errors.md says what a client does.
var ErrUnavailable = errors.New("store unavailable")

// ErrOutcomeUnknown marks a store failure after which a write may or may not have
// committed: the connection was lost after its COMMIT (or a write outside any
// transaction) may have reached the server. The 503 then says "outcome": "unknown"
// instead of "not_executed" (docs/errors.md). It always comes with ErrUnavailable.
var ErrOutcomeUnknown = errors.New("the write's outcome is unknown")

// Classify returns err wrapped with ErrUnavailable when it means the store could not
// be reached or lost its connection (refused, reset, closed, unexpected EOF, a
// backend shut down or terminated), is a standby refusing writes, is busy (SQLite
// locked), or is out of space, and
// err unchanged otherwise. Classify(nil) is nil.
func Classify(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	if unavailable(err) {
		return &unavailableError{err: err}
	}
	return err
}

// CommitFailed classifies the error of a COMMIT, or of a write sent outside a
// transaction, as Classify does, and marks it ErrOutcomeUnknown unless the store
// surely did not commit: PostgreSQL refused the statement itself (refused),
// nothing was sent (pgx's SafeToRetry, except "conn closed": see answerLost), the
// context ended before the call, the store is out of space, or SQLite reported busy
// (SQLite commits in-process: its answer is the outcome). A connection-class error
// or a pooler's error after the statement was sent is unknown (docs/errors.md).
func CommitFailed(err error) error {
	err = Classify(err)
	if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrOutcomeUnknown) || notCommitted(err) {
		return err
	}
	if ue := (*unavailableError)(nil); errors.As(err, &ue) {
		err = ue.err
	}
	return &unavailableError{err: err, unknown: true}
}

func notCommitted(err error) bool {
	var connectErr *pgconn.ConnectError
	msg := err.Error()
	return refused(err) || errors.As(err, &connectErr) || pgconn.SafeToRetry(err) && !answerLost(err) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) || errors.Is(err, sql.ErrTxDone) ||
		// database/sql gives up before handing the call to the driver; once pgx has
		// sent it, a deadline comes wrapped as pgconn's timeout.
		(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) && !pgconn.Timeout(err) ||
		strings.Contains(msg, "sql: database is closed") || sqliteBusy(msg) || OutOfSpace(err)
}

// refused reports an error PostgreSQL itself answered for the statement it was
// sent, which therefore did not run: a unique violation, a serialization failure, a
// full disk, a write refused by a standby. Not refused, because the statement's
// fate is not what they report: an error of the connection (class 08) or of the
// server going down (57P0x); any FATAL, after which the session is gone whatever
// its statement did; and any error a pooler sends in the server's place (fromPooler)
// — PgBouncer's "server conn crashed?" arrives after the server may have committed.
func refused(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || fromPooler(pgErr) {
		return false
	}
	sev := pgErr.SeverityUnlocalized
	if sev == "" {
		sev = pgErr.Severity
	}
	return sev != "FATAL" && sev != "PANIC" && !strings.HasPrefix(pgErr.Code, "08") && !strings.HasPrefix(pgErr.Code, "57P0")
}

// fromPooler reports an error that a pooler, not PostgreSQL, sent: PostgreSQL names
// the function that raised every error it sends (the R field); PgBouncer sends a
// severity, a SQLSTATE and a message only.
func fromPooler(pgErr *pgconn.PgError) bool { return pgErr.Routine == "" && pgErr.File == "" }

// answerLost reports pgx's "conn closed", which it calls safe to retry although it
// also reports it for a statement it did send: when the read of the answer fails,
// pgx closes the connection and its next read (still for that answer) finds it
// closed. A transaction whose connection closed before its COMMIT had a statement
// fail first and never reaches its COMMIT, so on a COMMIT it means the answer was
// lost, and the outcome is unknown (docs/errors.md).
func answerLost(err error) bool { return strings.Contains(err.Error(), "conn closed") }

type unavailableError struct {
	err     error
	unknown bool
}

func (e *unavailableError) Error() string { return "store unavailable: " + e.err.Error() }
func (e *unavailableError) Unwrap() []error {
	if e.unknown {
		return []error{ErrUnavailable, ErrOutcomeUnknown, e.err}
	}
	return []error{ErrUnavailable, e.err}
}

func unavailable(err error) bool {
	var netErr net.Error
	var pgErr *pgconn.PgError
	var connectErr *pgconn.ConnectError
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		// A backend that dies mid-answer leaves pgx with a truncated message.
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, sql.ErrConnDone):
		return true
	case OutOfSpace(err):
		return true
	case errors.As(err, &connectErr), errors.As(err, &netErr):
		return true
	case errors.As(err, &pgErr):
		// Class 08: connection exception; 57P01..03: admin shutdown, crash shutdown,
		// cannot connect now; 53300: too many connections; 25006: a write refused
		// by a server in recovery — a standby reached through a pooler or a
		// single-host URL while the failover settles (docs/deploying.md, Failover).
		// A pooler's FATAL (PgBouncer's query_wait_timeout, "server login has been
		// failing") closes the client's connection, whatever SQLSTATE it gives.
		// A prepared statement gone missing means a pooler without DATABASE_POOLER:
		// the statement was refused, and the next connection may serve it.
		return strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "57P") || pgErr.Code == "53300" ||
			pgErr.Code == "25006" || fromPooler(pgErr) && pgErr.Severity == "FATAL" || preparedStatementLost(err)
	case pgconn.SafeToRetry(err), pgconn.Timeout(err),
		errors.Is(err, context.DeadlineExceeded):
		return true
	}
	msg := err.Error()
	return sqliteBusy(msg) || strings.Contains(msg, "sql: database is closed") ||
		strings.Contains(msg, "conn closed") || strings.Contains(msg, "unexpected EOF")
}

// Cancelled reports whether err is a store call's failure caused by its context
// being cancelled: context.Canceled (pgx, database/sql), or SQLITE_INTERRUPT
// ("interrupted (9)"), with which the SQLite driver stops a statement whose context
// ended. The HTTP edge uses it to tell a client that hung up from a store failure.
func Cancelled(err error) bool {
	return err != nil && (errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "interrupted (9)"))
}

// sqliteBusy reports SQLite's busy or locked: another writer holds the lock.
func sqliteBusy(msg string) bool {
	return strings.Contains(msg, "database is locked") || strings.Contains(msg, "SQLITE_BUSY")
}

// sqliteFull reports SQLITE_FULL, which SQLite words the same whatever the cause.
func sqliteFull(msg string) bool { return strings.Contains(msg, "database or disk is full") }

// OutOfSpace reports whether err means the store has no room left: a file system's
// "no space left" or "quota exceeded" (the database's or the upload folder's),
// SQLite's SQLITE_FULL or PostgreSQL's disk_full (53100). It is a temporary store
// failure (503 STORE_UNAVAILABLE, docs/errors.md) wherever it comes from.
func OutOfSpace(err error) bool {
	var pgErr *pgconn.PgError
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) ||
		errors.As(err, &pgErr) && pgErr.Code == "53100" || sqliteFull(err.Error())
}
