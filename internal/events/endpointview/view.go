// Package endpointview is a webhook endpoint's public shape, in one place: the JSON
// of /v1/webhook-endpoints and the object each recorded change of an endpoint shows.
// It never holds the endpoint's signing secret.
package endpointview

import (
	"time"

	"github.com/riskapi/riskapi/internal/events"
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
	return Endpoint{ID: e.ID, URL: e.URL, Events: types, APIVersion: e.APIVersion, CreatedAt: e.CreatedAt.UTC()}
}

// Resource implements changes.View.
func (Endpoint) Resource() string { return "webhook_endpoint" }
