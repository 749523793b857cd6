// Package idempotency makes HTTP writes safe to retry, after Stripe's API and the IETF
// draft "The Idempotency-Key HTTP Header Field": a client sends an Idempotency-Key
// header; the first request with it runs, and every retry gets the stored response
// instead of a second side effect.
//
// The engine is a library: it knows nothing of the resources it protects. It needs
// only an opaque scope per request (a tenant), a Store, and handlers that write
// through the transaction their request context carries.
//
// # Model
//
// A record is identified by (scope, method, path, key) and holds a fingerprint of the
// request (SHA-256 over method, path, canonical query and canonical body; see
// Fingerprinter) and, once complete, the response's status, Content-Type and body.
//
//	no record ──reserve──▶ PROCESSING ──2xx──▶ COMPLETE ──TTL──▶ (absent)
//	                          │
//	                          └──non-2xx, error, panic──▶ FAILED (= absent)
//
// PROCESSING is not a row. It is the reservation: a database transaction holding a
// transaction-scoped lock on the key (pg_try_advisory_xact_lock on PostgreSQL; an
// in-process lock plus SQLite's single writer on SQLite). The handler's writes and
// the COMPLETE record commit together in that transaction — one durable commit per
// keyed write — so a crash at any point leaves either both or neither, and a process
// that dies releases its keys at once, its transaction dying with it. A second
// request for a key in PROCESSING is refused at once with 409 and Retry-After.
//
// A body hashed as a stream (Fingerprinter.Streams; riskapi's uploads) may be large,
// so its key is looked up before the body is read: Store.Held lets a held key be
// refused with 409 before a byte is read, and a live COMPLETE record is answered
// after the body is hashed in HashDiscard mode, which keeps nothing of it. Only a
// request that may run has its body kept (HashKeep) and reserves.
//
// # Who decides
//
// A Store only reports what it observed (Observation: the record read under the
// lock, and the reservation if the lock was taken). Which answer that means —
// replay, 422, 409 or run — is decided in one place, decide, so every Store gets the
// same state machine and the engine's tests (engine_test.go) pin it without SQL.
package idempotency
