// Package webhooks is the domain of inbound webhooks: per-tenant sources with their
// signing secrets, the signature scheme deliveries are verified with, and the
// processing of finding events into risks — exactly once per event ID, the event
// recorded in the same transaction as its effect. It knows nothing of HTTP or SQL.
package webhooks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"regexp"
	"time"

	"github.com/riskapi/riskapi/internal/ids"
)

// Source is a sender configured for a tenant: deliveries to
// /webhooks/inbound/{Name} are signed with Secret and act on TenantID's risks.
type Source struct {
	ID       string // "whk_…"
	TenantID string // whose risks its deliveries act on
	// Name is the path segment senders post to; unique across all tenants.
	Name string
	// Secret is the HMAC key ("whsec_…"). Verifying a signature needs the secret
	// itself, unlike an API key, whose hash suffices: the store keeps it encrypted
	// under an instance key (docs/roles-and-credentials.md), never in the clear,
	// and no response but the creating one carries it.
	Secret    string
	CreatedAt time.Time // UTC
}

// SecretPrefix starts every signing secret.
const SecretPrefix = "whsec_"

// Errors of sources.
var (
	// ErrSourceNotFound: no source with that name.
	ErrSourceNotFound = errors.New("webhook source not found")
	// ErrSourceExists: a source with that name exists already (in any tenant).
	ErrSourceExists = errors.New("webhook source already exists")
	// ErrInvalidSourceName: the name is not 1–100 characters of A-Z a-z 0-9 . _ -
	// starting with a letter or digit.
	ErrInvalidSourceName = errors.New("source name must be 1–100 characters of A-Z a-z 0-9 . _ - starting with a letter or digit")
)

var sourceName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// ValidSourceName reports whether name can name a source (it is a URL path segment).
func ValidSourceName(name string) bool { return sourceName.MatchString(name) }

// NewSource returns a source named name for tenantID with a fresh 256-bit secret.
// Errors: ErrInvalidSourceName.
func NewSource(tenantID, name string, now time.Time) (*Source, error) {
	if !ValidSourceName(name) {
		return nil, ErrInvalidSourceName
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, err
	}
	return &Source{ID: ids.New(ids.Webhook), TenantID: tenantID, Name: name,
		Secret: SecretPrefix + base64.RawURLEncoding.EncodeToString(raw[:]), CreatedAt: now}, nil
}

// Store persists sources and received event IDs. Methods write through the
// transaction their context carries, if any (see internal/database.Conn).
type Store interface {
	// InTx runs fn in a transaction that commits when fn returns nil and rolls back
	// otherwise; fn's context carries it.
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
	// CreateSource inserts s, or returns ErrSourceExists.
	CreateSource(ctx context.Context, s *Source) error
	// SourceByName returns the source named name, or ErrSourceNotFound.
	SourceByName(ctx context.Context, name string) (*Source, error)
	// Sources lists up to limit of the tenant's sources with IDs below before (empty:
	// from the newest), newest first, and whether more follow. Their Secret is empty:
	// a list never carries one.
	Sources(ctx context.Context, tenantID, before string, limit int) ([]*Source, bool, error)
	// DeleteSource deletes the tenant's source id and the event IDs it received, or
	// returns ErrSourceNotFound (also for another tenant's source).
	DeleteSource(ctx context.Context, tenantID, id string) error
	// RecordEvent records that the source received eventID at, and reports whether
	// this is the first time. A concurrent transaction recording the same event makes
	// it wait for that one's outcome, so exactly one of them is first.
	RecordEvent(ctx context.Context, sourceID, eventID string, at time.Time) (first bool, err error)
	// LockFinding serialises, until the transaction ends, the processing of events
	// about one finding of a tenant, so that two events about a new finding cannot
	// both create it.
	LockFinding(ctx context.Context, tenantID, externalID string) error
}
