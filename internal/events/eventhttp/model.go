package eventhttp

import (
	"encoding/json"
	"time"

	"github.com/riskapi/riskapi/internal/events"
	"github.com/riskapi/riskapi/internal/events/endpointview"
	"github.com/riskapi/riskapi/internal/ids"
)

// endpointRequest is POST /v1/webhook-endpoints' body.
type endpointRequest struct {
	URL    string   `json:"url"`
	Events []string `json:"events"`
	// APIVersion is the version its deliveries are rendered in; absent: the
	// tenant's pin.
	APIVersion *string `json:"apiVersion"`
}

// createdEndpointResponse is the one response that carries the secret.
type createdEndpointResponse struct {
	endpointview.Endpoint
	Secret string `json:"secret"`
}

// attemptResponse is one entry of an endpoint's delivery log.
type attemptResponse struct {
	EventID string `json:"eventId"`
	Attempt int    `json:"attempt"`
	// Status is the endpoint's HTTP status, null when no response arrived.
	Status    *int `json:"status"`
	Delivered bool `json:"delivered"`
	// Outcome is delivered, failed, or skipped: the event arrived while the
	// endpoint was disabled (attempt 0; redeliver it once enabled).
	Outcome    string    `json:"outcome"`
	Error      *string   `json:"error"`
	DurationMs int64     `json:"durationMs"`
	CreatedAt  time.Time `json:"createdAt"`
	// Livemode is the endpoint's (docs/sandboxes.md).
	Livemode bool `json:"livemode"`
}

// toAttempt returns a, an attempt of an endpoint of scope (a tenant or its sandbox).
func toAttempt(scope string) func(a *events.Attempt) attemptResponse {
	return func(a *events.Attempt) attemptResponse {
		r := attemptResponse{EventID: a.EventID, Attempt: a.N, Delivered: a.Delivered(),
			DurationMs: a.Duration.Milliseconds(), CreatedAt: a.CreatedAt, Outcome: "failed",
			Livemode: ids.Livemode(scope)}
		switch {
		case a.Skipped():
			r.Outcome = "skipped"
		case a.Delivered():
			r.Outcome = "delivered"
		}
		if a.StatusCode != 0 {
			s := a.StatusCode
			r.Status = &s
		}
		if a.Error != "" {
			e := a.Error
			r.Error = &e
		}
		return r
	}
}

// redeliverResponse answers POST /v1/events/{id}/redeliver.
type redeliverResponse struct {
	EventID string `json:"eventId"`
	// Deliveries is how many endpoints the event was queued for.
	Deliveries int `json:"deliveries"`
}

func payloadOf(ev *events.Event) json.RawMessage { return ev.Payload }
