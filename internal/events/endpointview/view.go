// Package endpointview is a webhook endpoint's public shape, in one place: the JSON
// of /v1/webhook-endpoints and the object each recorded change of an endpoint shows.
// It never holds the endpoint's signing secret.
package endpointview

import (
	"strconv"
	"time"

	"github.com/riskapi/riskapi/internal/etag"
	"github.com/riskapi/riskapi/internal/events"
	"github.com/riskapi/riskapi/internal/ids"
)

// Endpoint is a webhook endpoint as the API shows it (docs/openapi.yaml,
// WebhookEndpoint).
type Endpoint struct {
	ID  string `json:"id"`
	URL string `json:"url"`
	// Events are the types it subscribes to, or ["*"] for every type.
	Events []string `json:"events"`
	// APIVersion is the version its deliveries are rendered in.
	APIVersion string    `json:"apiVersion"`
	CreatedAt  time.Time `json:"createdAt"`
	// Livemode is false for an endpoint of the tenant's sandbox: it receives the
	// sandbox's events only (docs/sandboxes.md).
	Livemode bool `json:"livemode"`
	// Version is 1 at creation, one more for each change made through its routes;
	// its ETag, quoted, which PATCH's If-Match names.
	Version int64 `json:"version"`
	// Description is the tenant's note on it, "" when none.
	Description string `json:"description"`
	// DisabledAt is when it was disabled, null while enabled.
	DisabledAt *time.Time `json:"disabledAt"`
	// FailingSince is the first failed attempt since its last delivered one, null
	// when its last attempt delivered.
	FailingSince *time.Time `json:"failingSince"`
	// PreviousSecretExpiresAt is when the secret a roll replaced stops signing its
	// deliveries, null when no previous secret signs them.
	PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt"`
}

// Of returns e as the API shows it.
func Of(e *events.Endpoint) Endpoint {
	types := []string{"*"}
	if len(e.Types) > 0 {
		types = make([]string, len(e.Types))
		for i, t := range e.Types {
			types[i] = string(t)
		}
	}
	v := Endpoint{ID: e.ID, URL: e.URL, Events: types, APIVersion: e.APIVersion, CreatedAt: e.CreatedAt.UTC(), Description: e.Description,
		Livemode: ids.Livemode(e.TenantID), Version: e.Version,
		DisabledAt: utc(e.DisabledAt), FailingSince: utc(e.FailingSince)}
	if e.PreviousSecret != "" {
		v.PreviousSecretExpiresAt = utc(e.PreviousSecretExpiresAt)
	}
	return v
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// Resource implements changes.View.
func (Endpoint) Resource() string { return "webhook_endpoint" }

// ETag is the entity tag of e's responses: its version, quoted.
func ETag(e *events.Endpoint) string { return etag.Strong(strconv.FormatInt(e.Version, 10)) }
