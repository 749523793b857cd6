package events

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riskapi/riskapi/internal/apiversion"
	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/problem"
)

// Attempt is one try at delivering an event to an endpoint: the delivery log.
type Attempt struct {
	ID         int64 // increasing; the delivery log's cursor
	EndpointID string
	EventID    string
	// N counts the attempts of one delivery from 1; a redelivery starts again at 1.
	N int
	// StatusCode is the endpoint's HTTP status, or 0 when no response arrived.
	StatusCode int
	// Error says why the attempt failed ("" when it delivered). It never carries
	// the response body.
	Error     string
	Duration  time.Duration
	CreatedAt time.Time
}

// Delivered reports whether the attempt delivered the event (a 2xx in time).
func (a *Attempt) Delivered() bool { return a.Error == "" }

// Skipped reports whether the entry is no attempt but an event that arrived while
// the endpoint was disabled (N 0): it was not sent, and can be redelivered.
func (a *Attempt) Skipped() bool { return a.N == 0 }

// AttemptFilter selects a page of an endpoint's attempts, newest first.
type AttemptFilter struct {
	Limit  int   // 1–100
	Before int64 // only attempts with a smaller ID, if positive (the cursor)
}

// EndpointStore persists endpoints and reads the delivery log. Methods write through
// the transaction their context carries, if any.
type EndpointStore interface {
	// InTx runs fn in the transaction ctx carries, or in a new one.
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
	// LockEndpoints makes the rest of the transaction ctx carries the only one
	// changing the tenant's endpoints until it ends, so that the count Create
	// checks against Max still holds at its insert.
	LockEndpoints(ctx context.Context, tenantID string) error
	// CreateEndpoint inserts e.
	CreateEndpoint(ctx context.Context, e *Endpoint) error
	// Endpoints returns the tenant's endpoints, oldest first.
	Endpoints(ctx context.Context, tenantID string) ([]*Endpoint, error)
	// DeleteEndpoint deletes the tenant's endpoint with id, its queued deliveries
	// and its delivery log, or returns ErrEndpointNotFound.
	DeleteEndpoint(ctx context.Context, tenantID, id string) error
	// Attempts returns a page of the endpoint's delivery log, newest first, and
	// whether more follow; ErrEndpointNotFound when the tenant has no such endpoint.
	Attempts(ctx context.Context, tenantID, endpointID string, f AttemptFilter) ([]*Attempt, bool, error)
	// Requeue queues a new delivery of ev, due at now and given up at retryUntil, to
	// each enabled endpoint of its tenant subscribed to its type, and returns how
	// many; a disabled one gets a skipped entry in its delivery log instead.
	Requeue(ctx context.Context, ev *Event, now, retryUntil time.Time) (int, error)
	// Endpoint returns the tenant's endpoint with id, or ErrEndpointNotFound.
	Endpoint(ctx context.Context, tenantID, id string) (*Endpoint, error)
	// SaveEndpoint writes after over before (the same endpoint: its URL, types,
	// description, state and secrets) and records action with both; when after
	// disables it, its queued deliveries become skipped entries of its delivery log.
	SaveEndpoint(ctx context.Context, before, after *Endpoint, action changes.Action) error
	// FailingEndpoints returns the enabled endpoints, of every tenant, failing
	// since at or before since.
	FailingEndpoints(ctx context.Context, since time.Time) ([]*Endpoint, error)
}

// Endpoints manages a tenant's webhook endpoints (admin only, docs/events.md).
type Endpoints struct {
	Store  EndpointStore
	Events Store
	// Guard refuses URLs whose host is not allowed (SSRF). Required.
	Guard AddressChecker
	// RetryFor bounds a redelivery's retries (WEBHOOK_RETRY_FOR). Required.
	RetryFor time.Duration
	// Max is how many endpoints a tenant may have (WEBHOOK_ENDPOINTS_MAX): each
	// one is delivery work the tenant can make the server do. Required.
	Max int
	// AutoDisableAfter is how long an endpoint's every delivery may fail before it
	// is disabled (WEBHOOK_AUTO_DISABLE_AFTER); 0 never disables one.
	AutoDisableAfter time.Duration
	// Now is the clock. Optional. Default time.Now.
	Now func() time.Time
}

func (s *Endpoints) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC().Truncate(time.Microsecond)
	}
	return time.Now().UTC().Truncate(time.Microsecond)
}

// Create validates and stores a new endpoint and returns it with its secret, the
// only time the secret leaves the store. Errors: VALIDATION_FAILED naming "url" or
// "events", or naming "url" when the tenant has Max endpoints already; a Max that
// is not positive; the store's. Its deliveries are rendered in version ("": the
// newest).
func (s *Endpoints) Create(ctx context.Context, tenantID, rawURL string, types []string, version apiversion.Version) (*Endpoint, error) {
	e, err := NewEndpoint(ctx, s.Guard, tenantID, rawURL, types, s.now())
	if err != nil {
		return nil, err
	}
	e.APIVersion = string(version)
	if version == "" {
		e.APIVersion = string(apiversion.API.Newest())
	}
	limit := s.Max
	if limit <= 0 {
		return nil, errNoEndpointsMax
	}
	err = s.Store.InTx(ctx, func(ctx context.Context) error {
		if err := s.Store.LockEndpoints(ctx, tenantID); err != nil {
			return err
		}
		have, err := s.Store.Endpoints(ctx, tenantID)
		if err != nil {
			return err
		}
		if len(have) >= limit {
			return problem.Invalid("url", fmt.Sprintf("this tenant has %d endpoints, the most allowed (WEBHOOK_ENDPOINTS_MAX); delete one first", limit))
		}
		return s.Store.CreateEndpoint(ctx, e)
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// errNoEndpointsMax is Create's error when Endpoints.Max is unset: the limit
// comes from configuration (WEBHOOK_ENDPOINTS_MAX), never from this package.
var errNoEndpointsMax = errors.New("events: Endpoints.Max must be positive")

// Redeliver queues the tenant's event eventID again for every endpoint subscribed
// to its type now, with a fresh retry window, and returns how many deliveries it
// queued. Receivers see the same webhook-id as before. Errors: ErrNotFound; a
// RetryFor that is not positive.
func (s *Endpoints) Redeliver(ctx context.Context, tenantID, eventID string) (int, error) {
	retryFor := s.RetryFor
	if retryFor <= 0 {
		return 0, errNoRetryWindow
	}
	var n int
	err := s.Store.InTx(ctx, func(ctx context.Context) error {
		ev, err := s.Events.Get(ctx, tenantID, eventID)
		if err != nil {
			return err
		}
		now := s.now()
		n, err = s.Store.Requeue(ctx, ev, now, now.Add(retryFor))
		return err
	})
	return n, err
}
