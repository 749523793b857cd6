// Package requestlog is the per-tenant request log of docs/requests.md: one Entry
// per authenticated request, written off the request path by a Writer (buffered,
// inserted in batches, never blocking or failing the request it describes), listed
// newest first, and deleted by the sweep (sweep.ByAge) after its TTL.
//
// An entry holds what a client needs to learn what became of a request — status,
// route, credential, idempotency key and outcome, error code — and never a body, a
// header value, a token or a secret. The package knows nothing of HTTP or of the
// resources behind the routes.
package requestlog

import (
	"context"
	"errors"
	"time"
)

// Outcome is what the idempotency engine did with a keyed request. The set is open:
// a store keeps it as text, so a new outcome needs no migration.
type Outcome string

// Outcomes of docs/requests.md, after the engine's own (docs/idempotency.md).
const (
	OutcomeExecuted         Outcome = "executed"
	OutcomeReplayed         Outcome = "replayed"
	OutcomeInProgress       Outcome = "in_progress"
	OutcomeKeyReused        Outcome = "key_reused"
	OutcomeFailed           Outcome = "failed"
	OutcomeStoreUnavailable Outcome = "store_unavailable"
)

// Credential names how a request authenticated: Type "api_key" or "session", and
// the API key's or the session user's ID. Never the secret itself.
type Credential struct {
	Type string
	ID   string
}

// Entry is one logged request. Optional members are "" when absent (null in JSON).
type Entry struct {
	// ID is the entry's own identifier (log_…, ordered by creation): the list's
	// order and cursor. It is never shown; clients know an entry by RequestID.
	ID string
	// RequestID is the X-Request-Id the response carried (the "id" of
	// docs/requests.md). It is not unique: a client may send its own.
	RequestID string
	TenantID  string
	Method    string
	// Path is the request's path without its query (at most MaxPathLength bytes).
	Path string
	// Route is the matched route template, e.g. /v2/risks/:id.
	Route      string
	Status     int
	Duration   time.Duration
	Credential Credential
	// IdempotencyKey is the request's valid Idempotency-Key; an invalid one is
	// never logged.
	IdempotencyKey     string
	IdempotencyOutcome Outcome
	// ErrorCode is the problem code of a 4xx/5xx (docs/errors.md).
	ErrorCode string
	// StoreOutcome is the "outcome" of a 503 STORE_UNAVAILABLE, as its problem said:
	// "not_executed" (nothing was done) or "unknown" (it may have been); "" for
	// every other answer.
	StoreOutcome string
	// Via is "mcp" for a tool call of the MCP server, Client the MCP client's
	// name/version from its initialize; "" for plain HTTP (docs/mcp.md).
	Via, Client string
	// APIVersion is the API version the request was read and answered in
	// (docs/api-versions.md); "" for one refused before it had one.
	APIVersion string
	CreatedAt  time.Time
}

// MaxPathLength bounds Entry.Path; a longer path is cut.
const MaxPathLength = 512

// Filter selects a tenant's entries for List. Zero members do not filter.
type Filter struct {
	// Limit is the page size (≥ 1).
	Limit int
	// Before, when set, is an entry ID: only older entries are listed.
	Before         string
	IdempotencyKey string
	Status         int
	Method         string
	Outcome        Outcome
	APIVersion     string
	// Since and Until bound CreatedAt: Since ≤ createdAt < Until.
	Since, Until time.Time
}

// ErrNotFound: the tenant has no entry with that id.
var ErrNotFound = errors.New("requestlog: no such entry")

// ErrKeyNotFound: the tenant has no live idempotency record for that key, method
// and path, and no request holds the key (the key inspector's 404).
var ErrKeyNotFound = errors.New("requestlog: no live idempotency record for this key")

// Store keeps entries. Every read is scoped by tenant.
type Store interface {
	// Insert stores entries in one statement (at most a Writer batch).
	Insert(ctx context.Context, entries []*Entry) error
	// List returns up to f.Limit of the tenant's entries matching f, newest first
	// (by ID), and whether more follow.
	List(ctx context.Context, tenantID string, f Filter) ([]*Entry, bool, error)
	// Get returns the tenant's newest entry with requestID, or ErrNotFound.
	Get(ctx context.Context, tenantID, requestID string) (*Entry, error)
	// DeleteBefore deletes at most limit entries created before cutoff, oldest
	// first, and returns how many. Safe to run from several processes at once.
	DeleteBefore(ctx context.Context, cutoff time.Time, limit int) (int, error)
}
