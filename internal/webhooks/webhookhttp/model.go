package webhookhttp

import (
	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/webhooks"
)

// deliveryRequest is a delivery's body: {"id","type","data":{…}}.
type deliveryRequest struct {
	ID   *string         `json:"id"`
	Type *string         `json:"type"`
	Data *findingRequest `json:"data"`
}

// findingRequest is "data": the risk's fields, as in PATCH (absent members are not
// given, null clears an optional number and is refused for text), plus externalId.
type findingRequest struct {
	ExternalID  *string                         `json:"externalId"`
	Title       jsonbody.Optional[string]       `json:"title"`
	Description jsonbody.Optional[string]       `json:"description"`
	Category    jsonbody.Optional[string]       `json:"category"`
	Likelihood  jsonbody.Optional[jsonbody.Int] `json:"likelihood"`
	Impact      jsonbody.Optional[jsonbody.Int] `json:"impact"`
	RiskScore   jsonbody.Optional[jsonbody.Int] `json:"riskScore"`
	Status      jsonbody.Optional[string]       `json:"status"`
	Owner       jsonbody.Optional[string]       `json:"owner"`
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
	d := r.Data
	texts := []struct {
		name string
		in   jsonbody.Optional[string]
		out  **string
	}{{"title", d.Title, &ev.Change.Title}, {"description", d.Description, &ev.Change.Description},
		{"category", d.Category, &ev.Change.Category}, {"owner", d.Owner, &ev.Change.Owner}}
	for _, t := range texts {
		if !t.in.Set {
			continue
		}
		if t.in.Null {
			return ev, problem.Invalid("data/"+t.name, "cannot be null")
		}
		v := t.in.Value
		*t.out = &v
	}
	if d.Status.Set {
		if d.Status.Null {
			return ev, problem.Invalid("data/status", "cannot be null")
		}
		s := risks.Status(d.Status.Value)
		ev.Change.Status = &s
	}
	ev.Change.Likelihood = nullable(d.Likelihood)
	ev.Change.Impact = nullable(d.Impact)
	ev.Change.RiskScore = nullable(d.RiskScore)
	return ev, nil
}

func nullable(o jsonbody.Optional[jsonbody.Int]) *risks.Nullable[int] {
	if !o.Set {
		return nil
	}
	return &risks.Nullable[int]{Value: int(o.Value), Null: o.Null}
}
