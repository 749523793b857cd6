package database

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
)

type callTimeoutKey struct{}

// WithCallTimeout returns ctx marked so that every store call made with it — each
// statement, and each transaction RunInTx opens — is given up after d (then 503
// STORE_UNAVAILABLE): a store that stops answering (frozen, partitioned) cannot hold
// a request for longer. The HTTP server marks every request's context with
// config.Leases.Store; background work (sweeps, migrations) is not marked. A
// non-positive d leaves ctx unmarked.
func WithCallTimeout(ctx context.Context, d time.Duration) context.Context {
	if d <= 0 {
		return ctx
	}
	return context.WithValue(ctx, callTimeoutKey{}, d)
}

type queryTimeoutKey struct{}

// queryMark is what WithQueryTimeout marks a context with: the bound of a read's
// store calls, and whether one of them reached it.
type queryMark struct {
	d       time.Duration
	expired atomic.Bool
}

// ErrQueryTimeout is the cause (context.Cause) of a read's store call that ran
// past its query timeout (WithQueryTimeout).
var ErrQueryTimeout = errors.New("the read ran past its query timeout")

// WithQueryTimeout returns ctx marked so that every store call made with it is
// given up after d, as WithCallTimeout's are, when that is sooner than its call
// timeout: the bound of a read (QUERY_TIMEOUT), which a costly one may reach on a
// loaded store. Ending the call's context cancels the statement in the store: on
// PostgreSQL a cancel request (queryCanceller), on SQLite an interrupt (the driver
// watches the context). QueryTimedOut then tells the request's answer (503
// QUERY_TIMEOUT) from a store that stopped answering. A non-positive d leaves ctx
// unmarked.
func WithQueryTimeout(ctx context.Context, d time.Duration) context.Context {
	if d <= 0 {
		return ctx
	}
	return context.WithValue(ctx, queryTimeoutKey{}, &queryMark{d: d})
}

// QueryTimedOut reports whether a store call made with ctx (marked by
// WithQueryTimeout), or a context derived from it, was given up at its query
// timeout.
func QueryTimedOut(ctx context.Context) bool {
	m, ok := ctx.Value(queryTimeoutKey{}).(*queryMark)
	return ok && m.expired.Load()
}

// noteServerTimeout records for QueryTimedOut a read's statement that PostgreSQL
// itself cancelled at its statement_timeout (readBound), the backstop of the
// client's cancel: the read is answered 503 QUERY_TIMEOUT as when the client's
// deadline came first.
func noteServerTimeout(ctx context.Context, err error) {
	if err == nil || ctx == nil {
		return
	}
	q, ok := ctx.Value(queryTimeoutKey{}).(*queryMark)
	if !ok {
		return
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "57014" && strings.Contains(pgErr.Message, "statement timeout") {
		q.expired.Store(true)
	}
}

// Bound returns ctx bounded by the call timeout it is marked with (WithCallTimeout)
// and its cancel function, which the caller must call once the statement's rows are
// read. It is for the statements a store sends on database/sql directly, past GORM's
// callbacks, which bound the others.
func Bound(ctx context.Context) (context.Context, context.CancelFunc) { return bounded(ctx) }

// bounded returns ctx with the call timeout it is marked with, if that ends before
// ctx's own deadline, and its cancel function (a no-op when nothing was added).
//
// A call of a read (WithQueryTimeout) is bounded by its query timeout instead when
// that is sooner; reaching it is recorded for QueryTimedOut.
func bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	d, ok := ctx.Value(callTimeoutKey{}).(time.Duration)
	if q, read := ctx.Value(queryTimeoutKey{}).(*queryMark); read && (!ok || q.d < d) {
		if dl, has := ctx.Deadline(); has && time.Until(dl) <= q.d {
			return ctx, func() {}
		}
		cctx, cancel := context.WithTimeoutCause(ctx, q.d, ErrQueryTimeout)
		stop := context.AfterFunc(cctx, func() {
			if context.Cause(cctx) == ErrQueryTimeout {
				q.expired.Store(true)
			}
		})
		return cctx, func() {
			if !stop() && context.Cause(cctx) == ErrQueryTimeout {
				q.expired.Store(true) // the deadline passed; stop may have beaten f to it
			}
			cancel()
		}
	}
	if !ok {
		return ctx, func() {}
	}
	if dl, has := ctx.Deadline(); has && time.Until(dl) <= d {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

const cancelSetting = "riskapi:call-cancel"

// registerCallbacks installs, on every kind of GORM operation, the call timeout of
// WithCallTimeout (before), the outcome marking of writes sent outside a
// transaction (after, see markAutocommit) and the error's classification
// (registerClassify).
func registerCallbacks(db *gorm.DB) error {
	cb := db.Callback()
	// Row hands back rows the caller reads after it returns, so its call context
	// must outlive it (endCall's rows): it is released with its parent (the
	// request) or at its deadline.
	return errors.Join(
		cb.Create().Before("gorm:create").Register("riskapi:call_timeout", startCall),
		cb.Create().After("gorm:create").Register("riskapi:call_done", endCall(true, false)),
		cb.Update().Before("gorm:update").Register("riskapi:call_timeout", startCall),
		cb.Update().After("gorm:update").Register("riskapi:call_done", endCall(true, false)),
		cb.Delete().Before("gorm:delete").Register("riskapi:call_timeout", startCall),
		cb.Delete().After("gorm:delete").Register("riskapi:call_done", endCall(true, false)),
		cb.Raw().Before("gorm:raw").Register("riskapi:call_timeout", startCall),
		cb.Raw().After("gorm:raw").Register("riskapi:call_done", endCall(true, false)),
		cb.Query().Before("gorm:query").Register("riskapi:call_timeout", startCall),
		cb.Query().After("gorm:query").Register("riskapi:call_done", endCall(false, false)),
		cb.Row().Before("gorm:row").Register("riskapi:call_timeout", startCall),
		cb.Row().After("gorm:row").Register("riskapi:call_done", endCall(false, true)),
		registerClassify(db),
	)
}

// startCall gives the statement its call timeout.
func startCall(tx *gorm.DB) {
	ctx, cancel := bounded(tx.Statement.Context)
	tx.Statement.Context = ctx
	tx.Statement.Settings.Store(cancelSetting, cancel)
}

// endCall marks a write's outcome and releases the statement's timeout, unless it
// returned rows still to be read.
func endCall(write, rows bool) func(*gorm.DB) {
	return func(tx *gorm.DB) {
		noteServerTimeout(tx.Statement.Context, tx.Error)
		if write {
			markAutocommit(tx)
		}
		if c, ok := tx.Statement.Settings.Load(cancelSetting); ok && !rows {
			c.(context.CancelFunc)()
		}
	}
}

// markAutocommit marks the error of a write sent outside any transaction (it
// committed by itself, or not) with ErrOutcomeUnknown when the connection was lost
// after the statement may have reached the server.
func markAutocommit(tx *gorm.DB) {
	if tx.Error == nil {
		return
	}
	if _, inTx := tx.Statement.ConnPool.(gorm.TxCommitter); inTx {
		return
	}
	tx.Error = CommitFailed(tx.Error)
}
