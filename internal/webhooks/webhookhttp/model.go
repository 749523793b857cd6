package webhookhttp

import (
	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks/riskview"
	"github.com/riskapi/riskapi/internal/webhooks"
)

// deliveryRequest is a delivery's body: {"id","type","data":{…}}.
type deliveryRequest struct {
	ID   *string         `json:"id"`
	Type *string         `json:"type"`
	Data *findingRequest `json:"data"`
}

// findingRequest is "data": the risk's fields as in PATCH, plus externalId; the
// owner is a name, as senders of findings (scanners, no API version of their
// own) have always written it.
type findingRequest struct {
	ExternalID     *string                   `json:"externalId"`
	Owner          jsonbody.Optional[string] `json:"owner"`
	riskview.Patch `json:",inline"`
}

// ack is the answer to every accepted delivery.
type ack struct {
	Received  bool `json:"received"`
	Duplicate bool `json:"duplicate"`
}

// event converts r. Errors: VALIDATION_FAILED naming a missing member or a text field
// given as null.
func (r deliveryRequest) event() (webhooks.Event, error) {
	var ev webhooks.Event
	switch {
	case r.ID == nil:
		return ev, problem.Invalid("id", "is required")
	case r.Type == nil:
		return ev, problem.Invalid("type", "is required")
	case r.Data == nil:
		return ev, problem.Invalid("data", "is required")
	case r.Data.ExternalID == nil:
		return ev, problem.Invalid("data/externalId", "is required")
	}
	ev.ID, ev.Type, ev.ExternalID = *r.ID, webhooks.EventType(*r.Type), *r.Data.ExternalID
	change, nullField, err := r.Data.Update()
	if err != nil {
		return ev, err
	}
	if r.Data.Owner.Set {
		if r.Data.Owner.Null {
			nullField = "owner"
		}
		name := r.Data.Owner.Value
		change.Owner, change.OwnerUserID = &name, nil
	}
	if nullField != "" {
		return ev, problem.Invalid("data/"+nullField, "cannot be null")
	}
	ev.Change = change
	return ev, nil
}
