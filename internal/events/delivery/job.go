// Package delivery sends queued events to webhook endpoints, as Standard Webhooks
// (docs/events.md): every instance runs a Worker, which claims due deliveries with a
// lease (FOR UPDATE SKIP LOCKED on PostgreSQL), signs and POSTs each through the
// SSRF Guard, and settles it as delivered, to be retried after a backoff with full
// jitter, or given up once its retry window has passed. A claim whose instance died
// falls due again when its lease ends, so any instance resumes it.
//
// It knows nothing of HTTP handlers or of what the events report.
package delivery

import (
	"context"
	"errors"
	"time"

	"github.com/riskapi/riskapi/internal/events"
)

// Job is one claimed delivery: an event to send to an endpoint.
type Job struct {
	DeliveryID int64
	// Token is the claim's fencing token: only the claim holding it may settle the
	// delivery, so a worker whose lease ran out cannot overwrite a later claim.
	Token      string
	TenantID   string
	EventID    string // also the webhook-id header, the same on every attempt
	EndpointID string
	URL        string
	// Secrets sign it ("whsec_…"): the endpoint's, and the one a roll replaced
	// until it expires; each gives a signature of webhook-signature.
	Secrets []string
	Payload []byte
	// LeaseEnds is when the claim's lease ends: the delivery is due again then.
	LeaseEnds time.Time
	// Attempt is this attempt's number, from 1.
	Attempt    int
	RetryUntil time.Time // no attempt starts after this
	CreatedAt  time.Time // when the delivery was queued: delivery lag counts from here
}

// Result settles a job.
type Result struct {
	Attempt events.Attempt
	// Delivered: the endpoint answered 2xx in time.
	Delivered bool
	// RetryAt, when not zero, is when to try again; zero with Delivered false means
	// give up (the retry window has passed).
	RetryAt time.Time
}

// Settlement is a job and the result of its attempt.
type Settlement struct {
	Job    *Job
	Result *Result
}

// ErrLeaseLost: the job's claim was taken over (its lease ran out) or its delivery
// deleted; the result was not recorded.
var ErrLeaseLost = errors.New("delivery: claim no longer held")

// Skip is what a claim leaves out: deliveries to Endpoints at their bound, and those
// of Tenants that use their share of this instance's slots (Worker.PerTenant); and
// what it takes little of: at most one delivery of each of Slow, endpoints whose
// attempts take long, so that a claim never brings more of theirs than can start
// at once (a slow endpoint's waiting claims would hold its tenant's share).
type Skip struct {
	Endpoints []string
	Tenants   []string
	Slow      []string
}

// Store claims and settles deliveries.
type Store interface {
	// Claim takes up to limit pending deliveries due at now, oldest due first, except
	// those skip leaves out (nil: none), plus the oldest due delivery of each of
	// skip.Slow, and leases them until now+lease under one new token. Rows another
	// transaction is claiming are skipped, not waited for.
	Claim(ctx context.Context, now time.Time, lease time.Duration, limit int, skip *Skip) ([]*Job, error)
	// Settle records each settlement's attempt in the delivery log and marks its
	// delivery delivered, due again at RetryAt, or failed — those whose claim still
	// holds them — in one transaction. held[i] reports whether batch[i]'s claim held
	// (false: its result was dropped, like ErrLeaseLost).
	Settle(ctx context.Context, batch []Settlement) (held []bool, err error)
	// Release gives j back unattempted, due at once, if its claim still holds it.
	Release(ctx context.Context, j *Job) error
}
