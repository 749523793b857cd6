package events

import (
	"context"
	"slices"
	"time"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/problem"
)

// MaxDescriptionLength bounds an endpoint's description.
const MaxDescriptionLength = 500

// MaxSecretOverlap bounds how long a rolled secret keeps signing deliveries
// (roll-secret's expiresIn: 0–604800 seconds).
const MaxSecretOverlap = 7 * 24 * time.Hour

// EndpointUpdate is a PATCH of an endpoint: nil members are left as they are.
type EndpointUpdate struct {
	URL         *string
	Events      *[]string
	Description *string
	// APIVersion, a version of apiversion.API checked by the caller, is the one
	// its deliveries are rendered in from now on (docs/api-versions.md).
	APIVersion *string
}

// Get returns the tenant's endpoint with id, or ErrEndpointNotFound.
func (s *Endpoints) Get(ctx context.Context, tenantID, id string) (*Endpoint, error) {
	return s.Store.Endpoint(ctx, tenantID, id)
}

// IfMatch reports whether an endpoint's version satisfies the request's If-Match;
// nil when none was sent.
type IfMatch func(version int64) bool

// StaleEndpointError refuses a write whose If-Match does not name the endpoint's
// version: Current is the endpoint as stored now.
type StaleEndpointError struct{ Current *Endpoint }

func (e *StaleEndpointError) Error() string {
	return "webhook endpoint " + e.Current.ID + " changed since it was read"
}

// Update changes the members of the tenant's endpoint id that u gives, if ifMatch
// (nil: none sent) holds for its version, and records webhook_endpoint.updated
// (nothing when nothing changes). Errors: ErrEndpointNotFound; *StaleEndpointError;
// VALIDATION_FAILED naming "url", "events" or "description". The version's check is
// the edge's (API_VERSION_UNKNOWN, eventhttp).
func (s *Endpoints) Update(ctx context.Context, tenantID, id string, ifMatch IfMatch, u EndpointUpdate) (*Endpoint, error) {
	var types []Type
	if u.Events != nil {
		ts, err := parseTypes(*u.Events)
		if err != nil {
			return nil, problem.Invalid("events", err.Error())
		}
		types = ts
	}
	var url string
	if u.URL != nil {
		parsed, err := parseEndpointURL(*u.URL)
		if err != nil {
			return nil, problem.Invalid("url", err.Error())
		}
		if err := s.Guard.CheckURL(ctx, parsed); err != nil {
			return nil, problem.Invalid("url", err.Error())
		}
		url = parsed.String()
	}
	if u.Description != nil && len([]rune(*u.Description)) > MaxDescriptionLength {
		return nil, problem.Invalid("description", "must be at most 500 characters")
	}
	return s.changeIf(ctx, tenantID, id, ifMatch, changes.WebhookEndpointUpdated, func(e *Endpoint) error {
		if u.URL != nil {
			e.URL = url
		}
		if u.Events != nil {
			e.Types = types
		}
		if u.Description != nil {
			e.Description = *u.Description
		}
		if u.APIVersion != nil {
			e.APIVersion = *u.APIVersion
		}
		return nil
	})
}

// SetDisabled disables (true) or enables the tenant's endpoint id and records
// webhook_endpoint.disabled or .enabled; nothing when it is in that state already.
// Enabling it forgets its failures: auto-disable counts again from its next
// failed delivery. ifMatch (nil: none sent) must hold for its version. Errors:
// ErrEndpointNotFound; *StaleEndpointError.
func (s *Endpoints) SetDisabled(ctx context.Context, tenantID, id string, ifMatch IfMatch, disabled bool) (*Endpoint, error) {
	action := changes.WebhookEndpointEnabled
	if disabled {
		action = changes.WebhookEndpointDisabled
	}
	now := s.now()
	return s.changeIf(ctx, tenantID, id, ifMatch, action, func(e *Endpoint) error {
		if disabled && e.DisabledAt == nil {
			e.DisabledAt = &now
		}
		if !disabled && e.DisabledAt != nil {
			e.DisabledAt, e.FailingSince = nil, nil
		}
		return nil
	})
}

// RollSecret gives the tenant's endpoint id a new secret, which it returns (the
// only time it leaves the store), and records webhook_endpoint.secret_rolled: the
// old secret keeps signing every delivery, beside the new one, until now+overlap
// (0: it stops at once). ifMatch (nil: none sent) must hold for its version.
// Errors: ErrEndpointNotFound; *StaleEndpointError; ErrSecretRolling while a
// previous roll's secret is still signing (as a rolled API key, docs/events.md);
// VALIDATION_FAILED naming "expiresIn".
func (s *Endpoints) RollSecret(ctx context.Context, tenantID, id string, ifMatch IfMatch, overlap time.Duration) (*Endpoint, error) {
	if overlap < 0 || overlap > MaxSecretOverlap {
		return nil, problem.Invalid("expiresIn", "must be 0–604800 seconds")
	}
	secret, err := newSecret()
	if err != nil {
		return nil, err
	}
	now := s.now()
	ends := now.Add(overlap)
	// The check runs under the tenant's endpoint lock, on the version the save
	// is conditioned on: of concurrent rolls exactly one succeeds.
	return s.changeIf(ctx, tenantID, id, ifMatch, changes.WebhookEndpointSecretRolled, func(e *Endpoint) error {
		if e.PreviousSecret != "" && e.PreviousSecretExpiresAt != nil && e.PreviousSecretExpiresAt.After(now) {
			return ErrSecretRolling
		}
		e.PreviousSecret, e.PreviousSecretExpiresAt = e.Secret, &ends
		if overlap == 0 {
			e.PreviousSecret, e.PreviousSecretExpiresAt = "", nil
		}
		e.Secret = secret
		return nil
	})
}

// Delete deletes the tenant's endpoint id, with its queued deliveries and its
// delivery log, if ifMatch (nil: none sent) holds for its version, and records
// webhook_endpoint.deleted. The check and the delete run under the tenant's
// endpoint lock, so a PATCH between them cannot slip past the condition. Errors:
// ErrEndpointNotFound; *StaleEndpointError.
func (s *Endpoints) Delete(ctx context.Context, tenantID, id string, ifMatch IfMatch) error {
	return s.Store.InTx(ctx, func(ctx context.Context) error {
		if err := s.Store.LockEndpoints(ctx, tenantID); err != nil {
			return err
		}
		if ifMatch != nil {
			before, err := s.Store.Endpoint(ctx, tenantID, id)
			if err != nil {
				return err
			}
			if !ifMatch(before.Version) {
				return &StaleEndpointError{Current: before}
			}
		}
		return s.Store.DeleteEndpoint(ctx, tenantID, id)
	})
}

// ErrSecretRolling refuses a roll while the secret a previous roll replaced still
// signs deliveries: rolling again would end it before the overlap promised.
var ErrSecretRolling = problem.Invalid("id", "the previous secret still signs deliveries until the end of its overlap: roll again after it")

// AutoDisable disables every enabled endpoint whose every delivery has failed
// for AutoDisableAfter, recording webhook_endpoint.disabled with actor system, and
// returns how many. Safe on several instances at once: an endpoint disabled
// already is left as it is. Nothing when AutoDisableAfter is 0.
func (s *Endpoints) AutoDisable(ctx context.Context) (int, error) {
	if s.AutoDisableAfter <= 0 {
		return 0, nil
	}
	eps, err := s.Store.FailingEndpoints(ctx, s.now().Add(-s.AutoDisableAfter))
	if err != nil {
		return 0, err
	}
	ctx = changes.WithActor(ctx, changes.Actor{Type: changes.ActorSystem})
	n := 0
	for _, e := range eps {
		after, err := s.SetDisabled(ctx, e.TenantID, e.ID, nil, true)
		if err != nil {
			return n, err
		}
		if after.DisabledAt != nil && e.DisabledAt == nil {
			n++
		}
	}
	return n, nil
}

// changeIf reads the tenant's endpoint under its tenant's endpoint lock, checks
// ifMatch (nil: none sent) on the version read, applies edit to a copy and saves
// it one version on, recording action, unless edit changed nothing. Errors:
// *StaleEndpointError when ifMatch does not hold; edit's, which writes nothing.
func (s *Endpoints) changeIf(ctx context.Context, tenantID, id string, ifMatch IfMatch, action changes.Action, edit func(e *Endpoint) error) (*Endpoint, error) {
	var after *Endpoint
	err := s.Store.InTx(ctx, func(ctx context.Context) error {
		if err := s.Store.LockEndpoints(ctx, tenantID); err != nil {
			return err
		}
		before, err := s.Store.Endpoint(ctx, tenantID, id)
		if err != nil {
			return err
		}
		if ifMatch != nil && !ifMatch(before.Version) {
			return &StaleEndpointError{Current: before}
		}
		e := *before
		if err := edit(&e); err != nil {
			return err
		}
		after = &e
		if sameEndpoint(before, after) {
			return nil
		}
		after.Version = before.Version + 1
		return s.Store.SaveEndpoint(ctx, before, after, action)
	})
	if err != nil {
		return nil, err
	}
	return after, nil
}

// sameEndpoint reports whether a and b store the same.
func sameEndpoint(a, b *Endpoint) bool {
	same := func(x, y *time.Time) bool { return (x == nil) == (y == nil) && (x == nil || x.Equal(*y)) }
	return a.URL == b.URL && slices.Equal(a.Types, b.Types) && a.Description == b.Description && a.APIVersion == b.APIVersion &&
		a.Secret == b.Secret && a.PreviousSecret == b.PreviousSecret &&
		same(a.DisabledAt, b.DisabledAt) && same(a.FailingSince, b.FailingSince) &&
		same(a.PreviousSecretExpiresAt, b.PreviousSecretExpiresAt)
}
