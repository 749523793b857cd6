package idempotency

import (
	"context"
	"errors"
	"time"
)

// State is the state of a stored record. PROCESSING is no state a record holds: it is
// a reservation (Store.Reserve), a transaction holding the key's lock, so it can
// never outlive the process that runs the request.
type State string

// Record states.
const (
	// StateComplete: the request ran to a 2xx; its response is replayed until
	// ExpiresAt.
	StateComplete State = "complete"
	// StateFailed: the latest attempt ended non-2xx, errored or panicked and was
	// rolled back. The engine treats it as absent; the row exists so that an
	// operator (and the key inspector of a later issue) can tell "failed" from
	// "never seen" (docs/idempotency.md, "States").
	StateFailed State = "failed"
)

// RecordKey identifies a record: (scope, method, path, key). Scope is opaque to the
// engine (riskapi uses the tenant ID), so two scopes never share a record whatever
// the key string.
type RecordKey struct {
	Scope  string // at most 64 bytes
	Method string // POST, PUT, PATCH or DELETE
	Path   string // the request's path, e.g. /v2/risks/risk_0193…
	Key    string // the Idempotency-Key, [A-Za-z0-9._-]{8,128}
}

// Record is the stored outcome of a keyed request.
type Record struct {
	RecordKey
	// Fingerprint is the lowercase hex SHA-256 of the request (Fingerprinter).
	Fingerprint string
	State       State
	// StatusCode, ContentType, Headers and Body are the response to replay
	// (COMPLETE only). Headers holds the Config.KeepHeaders the response carried, by
	// canonical name (one value each); no other response header is stored.
	StatusCode  int
	ContentType string
	Headers     map[string]string
	Body        []byte
	CreatedAt   time.Time
	// ExpiresAt is CreatedAt + TTL; from then on the record counts as absent.
	ExpiresAt time.Time
	// RequestID is the request id of the attempt that stored the record, for the
	// key inspector (docs/requests.md); "" when unknown.
	RequestID string
}

// Live reports whether r is still honoured at now.
func (r *Record) Live(now time.Time) bool { return now.Before(r.ExpiresAt) }

// Observation is what Store.Reserve saw of one key. It carries no verdict: the engine
// alone decides from it whether to replay, refuse (422, 409) or run (decide).
type Observation struct {
	// Record is the key's committed record, nil if there is none. When Held is set it
	// was read after the lock was taken, so it includes every attempt that completed
	// before, and no other attempt can change it while Held lasts.
	Record *Record
	// Held is the key's reservation when this request took the lock, nil when
	// another request holds it.
	Held Reservation
}

// Store keeps records and grants reservations. It reports what it finds and never
// decides an answer. Implementations must make Reserve atomic across every process
// sharing the store: at most one live Reservation per RecordKey, released when its
// transaction ends or its process dies.
type Store interface {
	// Lookup reads k's committed record, nil if there is none, without a lock or a
	// transaction: one plain read. The engine calls it first and answers a live
	// COMPLETE record from it (a replay costs no lock and no write); any other result
	// goes on to Reserve, whose read under the lock is the one that counts.
	Lookup(ctx context.Context, k RecordKey) (*Record, error)
	// Held reports whether another request holds k's lock now (PROCESSING), without
	// taking the lock or waiting for it. The answer is a snapshot: the engine asks it
	// only before reading a streamed body (Fingerprinter.Streams), to refuse with
	// 409 at once rather than after the whole body; a false answer still goes on to
	// Reserve, whose attempt at the lock is the one that counts.
	Held(ctx context.Context, k RecordKey) (bool, error)
	// Reserve tries, without waiting, to take k's lock, and reads k's committed
	// record (under the lock when it was taken). ctx bounds the reservation: its
	// deadline ends the transaction. An error means the store failed; no lock is
	// then held.
	Reserve(ctx context.Context, k RecordKey) (Observation, error)
	// MarkFailed records rec (State FAILED) unless a COMPLETE record for the same key
	// is live at now: it runs after the reservation is released, and must never
	// overwrite another attempt's success.
	MarkFailed(ctx context.Context, rec *Record, now time.Time) error
	// DeleteExpired deletes at most limit records whose ExpiresAt is at or before
	// now and returns how many it deleted. It must never delete a record re-reserved
	// and completed after expiring, and must be safe to run from several processes
	// at once.
	DeleteExpired(ctx context.Context, now time.Time, limit int) (int, error)
}

// Reservation is the PROCESSING state of one key: its lock, held until Complete or
// Release, exactly one of which must be called.
type Reservation interface {
	// Begin returns ctx carrying the reservation's transaction, beginning it if the
	// store defers that until the engine decides to run (SQLite: a replay then never
	// takes the write lock). The handler must make every database write through the
	// returned context. Errors: the store failed; call Release.
	Begin(ctx context.Context) (context.Context, error)
	// Complete stores rec (State COMPLETE) in the transaction and commits it with the
	// handler's writes. On error nothing is committed — or, when the error wraps
	// ErrOutcomeUnknown (the connection was lost while the COMMIT may have reached
	// the store), both or neither are and nobody can tell which yet.
	Complete(ctx context.Context, rec *Record) error
	// Release rolls the transaction back, undoing the handler's writes, and frees
	// the key. Calling it again is a no-op.
	Release() error
}

// ErrOutcomeUnknown is wrapped by a Reservation.Complete error after which the
// request's writes and its COMPLETE record may or may not have been committed. The
// engine then answers 503 with outcome "unknown" instead of "not_executed": the
// client must retry with the same key (a committed attempt is replayed) or look the
// key up, and never assume nothing was done (docs/idempotency.md).
var ErrOutcomeUnknown = errors.New("idempotency: the commit's outcome is unknown")
