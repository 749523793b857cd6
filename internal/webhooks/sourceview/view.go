// Package sourceview is an inbound webhook source's public shape, in one place: the
// JSON of /v1/webhook-sources and the object each recorded change of a source shows.
// It never holds the source's secret.
package sourceview

import (
	"time"

	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/webhooks"
)

// Source is a webhook source as the API shows it (docs/openapi.yaml, WebhookSource).
type Source struct {
	ID string `json:"id"`
	// Source is the path segment of /webhooks/inbound/{source}.
	Source    string    `json:"source"`
	CreatedAt time.Time `json:"createdAt"`
	// Livemode is false for a source made in test mode: its findings change the
	// sandbox's risks (docs/sandboxes.md).
	Livemode bool `json:"livemode"`
}

// Of returns s as the API shows it.
func Of(s *webhooks.Source) Source {
	return Source{ID: s.ID, Source: s.Name, CreatedAt: s.CreatedAt.UTC(), Livemode: ids.Livemode(s.TenantID)}
}

// Resource implements changes.View.
func (Source) Resource() string { return "webhook_source" }
