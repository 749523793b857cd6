package delivery

import (
	"context"
	"encoding/json"
	"time"

	"github.com/riskapi/riskapi/internal/events"
	"github.com/riskapi/riskapi/internal/events/endpointview"
	"github.com/riskapi/riskapi/internal/ids"
)

// PingType is the type of the message POST /v1/webhook-endpoints/{id}/ping sends:
// a test message, never stored as an event nor listed (docs/events.md).
const PingType = "endpoint.ping"

// PingResult is the outcome of a ping, as the route answers it.
type PingResult struct {
	// StatusCode is the endpoint's HTTP status, 0 when no response arrived.
	StatusCode int
	// Error says why it failed, "" when the endpoint answered 2xx in time.
	Error    string
	Duration time.Duration
}

// Ping sends e a signed endpoint.ping now, through the same guard, signatures
// (both while a rolled secret overlaps) and timeout as every delivery, and returns
// its outcome; a disabled endpoint is pinged too, so it can be checked before it
// is enabled. The ping is no delivery: it is not retried, logged or counted
// towards auto-disable.
func (s *Sender) Ping(ctx context.Context, e *events.Endpoint) PingResult {
	now := s.now().UTC().Truncate(time.Microsecond)
	id := ids.New(ids.Event)
	var msg struct {
		ID        string    `json:"id"`
		Type      string    `json:"type"`
		CreatedAt time.Time `json:"createdAt"`
		Data      struct {
			Object endpointview.Endpoint `json:"object"`
		} `json:"data"`
	}
	msg.ID, msg.Type, msg.CreatedAt, msg.Data.Object = id, PingType, now, endpointview.Of(e)
	payload, err := json.Marshal(msg)
	if err != nil {
		return PingResult{Error: "the ping could not be encoded"}
	}
	j := &Job{TenantID: e.TenantID, EventID: id, EndpointID: e.ID, URL: e.URL, Secrets: e.Secrets(now),
		Payload: payload, Attempt: 1, CreatedAt: now}
	status, failure, d := s.Send(ctx, j)
	return PingResult{StatusCode: status, Error: failure, Duration: d}
}
