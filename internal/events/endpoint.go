package events

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/problem"
)

// SecretPrefix starts every endpoint signing secret; the rest is the standard base64
// of the HMAC key (Standard Webhooks).
const SecretPrefix = "whsec_"

// MaxURLLength bounds an endpoint URL.
const MaxURLLength = 2048

// Endpoint is a URL a tenant's events are delivered to (docs/events.md).
type Endpoint struct {
	ID       string // "we_…"
	TenantID string
	URL      string // http or https
	// Types are the event types it receives; empty means every type.
	Types []Type
	// Secret signs its deliveries ("whsec_" + base64 of 32 random bytes). It is
	// stored as is, since signing needs it, and shown to the client only once.
	Secret string
	// APIVersion is the version its deliveries are rendered in (docs/api-versions.md):
	// the tenant's pin at creation unless the creation names one.
	APIVersion string
	CreatedAt  time.Time // UTC, microseconds
	// Description is the tenant's note on it (at most MaxDescriptionLength).
	Description string
	// DisabledAt is when it was disabled (by an admin, or automatically after
	// failing for WEBHOOK_AUTO_DISABLE_AFTER), nil while enabled. Events arriving
	// while it is disabled are logged as skipped deliveries, not sent.
	DisabledAt *time.Time
	// PreviousSecret is the secret a roll replaced, "" when none; until
	// PreviousSecretExpiresAt every delivery is signed with both.
	PreviousSecret          string
	PreviousSecretExpiresAt *time.Time
	// FailingSince is the first failed attempt since its last delivered one, nil
	// when its last attempt delivered.
	FailingSince *time.Time
	// Version is 1 at creation and one more for each change of it made through
	// Endpoints (migration 0025): its ETag, which a PATCH's If-Match names. The
	// delivery worker's bookkeeping (FailingSince) does not move it.
	Version int64
}

// Secrets are the secrets its deliveries are signed with at now: the current one,
// and the previous one until it expires.
func (e *Endpoint) Secrets(now time.Time) []string {
	if e.PreviousSecret != "" && e.PreviousSecretExpiresAt != nil && now.Before(*e.PreviousSecretExpiresAt) {
		return []string{e.Secret, e.PreviousSecret}
	}
	return []string{e.Secret}
}

// Subscribed reports whether e receives events of type t.
func (e *Endpoint) Subscribed(t Type) bool { return len(e.Types) == 0 || slices.Contains(e.Types, t) }

// ErrEndpointNotFound: no endpoint with that ID in that tenant.
var ErrEndpointNotFound = errors.New("webhook endpoint not found")

// AddressChecker decides whether a URL's host may receive deliveries; the SSRF
// guard (internal/events/delivery) implements it.
type AddressChecker interface {
	// CheckURL resolves u's host and returns an error saying why it is refused, or nil.
	CheckURL(ctx context.Context, u *url.URL) error
}

// NewEndpoint validates rawURL and types and returns an endpoint for tenantID with a
// fresh secret. types ["*"] or nil (omitted) subscribes to every type; an empty
// list is refused. guard decides whether the URL's address may be used.
//
// Errors: *problem.Problem VALIDATION_FAILED naming "url" or "events".
func NewEndpoint(ctx context.Context, guard AddressChecker, tenantID, rawURL string, types []string, now time.Time) (*Endpoint, error) {
	u, uerr := parseEndpointURL(rawURL)
	ts, terr := parseTypes(types)
	if uerr != nil || terr != nil {
		// Both named at once (docs/errors.md, VALIDATION_FAILED).
		var bad []problem.FieldError
		if uerr != nil {
			bad = append(bad, problem.FieldError{Field: "url", Detail: uerr.Error()})
		}
		if terr != nil {
			bad = append(bad, problem.FieldError{Field: "events", Detail: terr.Error()})
		}
		return nil, problem.Fields(bad)
	}
	if err := guard.CheckURL(ctx, u); err != nil {
		return nil, problem.Invalid("url", err.Error())
	}
	secret, err := newSecret()
	if err != nil {
		return nil, err
	}
	return &Endpoint{ID: ids.New(ids.Endpoint), TenantID: tenantID, Version: 1, URL: u.String(), Types: ts,
		Secret: secret, CreatedAt: now}, nil
}

// newSecret is a fresh signing secret: "whsec_" + base64 of 32 random bytes.
func newSecret() (string, error) {
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		return "", err
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key[:]), nil
}

func parseEndpointURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("is required")
	}
	if len(raw) > MaxURLLength {
		return nil, errors.New("must be at most 2048 characters")
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, errors.New("is not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("must be an http or https URL")
	case u.Hostname() == "":
		return nil, errors.New("must name a host")
	case u.User != nil:
		return nil, errors.New("must not carry a user name or password")
	case u.Fragment != "":
		return nil, errors.New("must not carry a fragment")
	}
	return u, nil
}

func parseTypes(in []string) ([]Type, error) {
	if in != nil && len(in) == 0 {
		// An empty list reads as "nothing", not "everything": refused, not widened.
		return nil, errors.New(`give at least one event type, or ["*"]`)
	}
	if len(in) == 0 || (len(in) == 1 && in[0] == "*") {
		return nil, nil
	}
	out := make([]Type, 0, len(in))
	var unknown []string
	for _, s := range in {
		t := Type(s)
		if !t.Valid() {
			unknown = append(unknown, strconv.Quote(s))
			continue
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if len(unknown) > 0 {
		// Every unknown name, so a list with two typos is mended in one round.
		return nil, errors.New(strings.Join(unknown, ", ") + ": no event type; give \"*\" or event types among " + TypeNames())
	}
	return out, nil
}

// TypeNames lists the event types for messages: "risk.created, risk.updated, …".
func TypeNames() string {
	s := make([]string, len(Types))
	for i, t := range Types {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}
