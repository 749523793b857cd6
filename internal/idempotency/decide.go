package idempotency

import "time"

// verdict is the engine's answer to one keyed request.
type verdict int

const (
	// run: this request holds the key and no live COMPLETE record answers it.
	run verdict = iota
	// replay: a live COMPLETE record with the request's fingerprint answers it.
	replay
	// keyReused: a live COMPLETE record of another request holds the key (422).
	keyReused
	// inProgress: another request holds the key and no record answers (409).
	inProgress
)

// decide is the decision table of docs/idempotency.md ("States"), and its only home:
// stores report what they saw, and nothing else chooses between replay, 422, 409
// and run. A live COMPLETE record answers whether or not the lock was free, so
// concurrent retries of a finished request are replayed, never refused with 409. A
// FAILED or expired record counts as absent.
func decide(obs Observation, fingerprint string, now time.Time) verdict {
	if v, ok := answered(obs.Record, fingerprint, now); ok {
		return v
	}
	if obs.Held == nil {
		return inProgress
	}
	return run
}

// answered reports whether rec alone settles the request: a live COMPLETE record
// answers with a replay or 422 whoever holds the key. Such a record never changes
// until it expires (Complete only overwrites a FAILED or expired record, MarkFailed
// and the sweep never touch a live COMPLETE one), so a read of it needs no lock: the
// engine answers from Store.Lookup and reserves only when this reports false.
func answered(rec *Record, fingerprint string, now time.Time) (verdict, bool) {
	if !settles(rec, now) {
		return run, false
	}
	if rec.Fingerprint == fingerprint {
		return replay, true
	}
	return keyReused, true
}

// settles reports whether rec is a live COMPLETE record at now: one that answers every
// request for its key, with a replay or 422 by fingerprint (answered).
func settles(rec *Record, now time.Time) bool {
	return rec != nil && rec.State == StateComplete && rec.Live(now)
}
