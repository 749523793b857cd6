package idempotency

import (
	"context"
	"errors"
	"time"
)

// State is the state of a stored record.
type State string

// Record states. StateProcessing is never stored by the reference Store (the
// reservation's lock is the PROCESSING state), but a Store may report it.
const (
	StateProcessing State = "processing"
	StateComplete   State = "complete"
	StateFailed     State = "failed"
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
	// StatusCode, ContentType and Body are the response to replay (COMPLETE only).
	// No other response header is stored.
	StatusCode  int
	ContentType string
	Body        []byte
	CreatedAt   time.Time
	// ExpiresAt is CreatedAt + TTL; from then on the record counts as absent.
	ExpiresAt time.Time
}

// Live reports whether r is still honoured at now.
func (r *Record) Live(now time.Time) bool { return now.Before(r.ExpiresAt) }

// Errors a Store returns. Any other error means the store failed; the engine then
// fails closed with 503 STORE_UNAVAILABLE.
var (
	// ErrNotFound: no record for the key.
	ErrNotFound = errors.New("idempotency: no record")
	// ErrLocked: another request holds the key's reservation (PROCESSING).
	ErrLocked = errors.New("idempotency: key is being processed")
)

// Store keeps records and grants reservations. Implementations must make Reserve
// atomic across every process sharing the store: at most one live Reservation per
// RecordKey, released when its transaction ends or its process dies.
type Store interface {
	// Get returns the committed record for k, or ErrNotFound. It takes no lock.
	Get(ctx context.Context, k RecordKey) (*Record, error)
	// Reserve looks k up and, unless its committed record is COMPLETE and live at
	// now, reserves it: it begins a transaction bound to ctx (whose deadline bounds
	// the reservation) and takes k's lock in it. It returns
	//   - (nil, rec, nil) when rec is COMPLETE and live: answer from it;
	//   - (nil, rec, ErrLocked) at once when another transaction holds k (rec, if
	//     not nil, is not a live COMPLETE record);
	//   - (res, prev, nil) when reserved; prev is the record read under the lock —
	//     nil, FAILED or expired — that this attempt replaces.
	// Any other error means the store failed.
	Reserve(ctx context.Context, k RecordKey, now time.Time) (Reservation, *Record, error)
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

// Answers reports whether rec settles a request at now without running it: a live
// COMPLETE record is replayed (same fingerprint) or refuses a different request.
func (r *Record) Answers(now time.Time) bool {
	return r != nil && r.State == StateComplete && r.Live(now)
}

// Reservation is the PROCESSING state of one key: an open transaction holding the
// key's lock. Exactly one of Complete or Release must be called.
type Reservation interface {
	// Context returns ctx carrying the reservation's transaction: the handler must
	// make every database write through it.
	Context(ctx context.Context) context.Context
	// Complete stores rec (State COMPLETE) in the transaction and commits it with the
	// handler's writes. On error nothing is committed — or, if the commit's outcome
	// is unknown, both or neither are.
	Complete(ctx context.Context, rec *Record) error
	// Release rolls the transaction back, undoing the handler's writes, and frees
	// the key.
	Release() error
}
