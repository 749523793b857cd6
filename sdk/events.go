package riskapi

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// EventsService reads the tenant's events (/v2/events, scope events:read). Reach
// it as Client.Events.
type EventsService service

// Event is one committed change, as listed and as delivered to webhook endpoints.
type Event struct {
	// ID is "evt_…"; a webhook delivery's webhook-id header carries it, the same
	// on every attempt, so receivers deduplicate on it.
	ID   string    `json:"id"`
	Type EventType `json:"type"`
	// CreatedAt is when the change committed (server clock).
	CreatedAt time.Time `json:"createdAt"`
	// Data.Object is the changed resource as the API returns it (for risk.deleted,
	// the risk as it was). Decode it with Event.Object.
	Data struct {
		Object json.RawMessage `json:"object"`
	} `json:"data"`
	// Request names the API request that made the change.
	Request struct {
		// ID is that request's X-Request-Id; empty if it had none.
		ID string `json:"id"`
		// IdempotencyKey is its Idempotency-Key; empty if it had none.
		IdempotencyKey string `json:"idempotencyKey"`
	} `json:"request"`
	// Livemode is false for test data: the tenant's sandbox, which test keys
	// (rk_test_…) reach (docs/sandboxes.md).
	Livemode bool `json:"livemode"`

	// LastResponse describes the HTTP exchange that returned this event.
	LastResponse *APIResponse `json:"-"`
}

// Object decodes the event's object into v, e.g. a *Risk for risk.* events.
func (e *Event) Object(v any) error { return json.Unmarshal(e.Data.Object, v) }

// EventListParams select a listing of events, newest first. A nil
// *EventListParams lists every event with the server's page size.
type EventListParams struct {
	Params

	// Type, when set, lists only events of this type.
	Type EventType
	// Limit is the page size; 0 means the server's default.
	Limit int
	// Cursor starts the listing after an earlier page: a Page.NextCursor.
	Cursor string
}

// List returns the tenant's events, newest first, as a sequence fetching pages as
// the loop advances (GET /v2/events?limit=&cursor=&type=). On error it yields
// (nil, err) once and ends.
//
// Errors: *Error with 403 FORBIDDEN without the events:read scope, 400
// VALIDATION_FAILED for an unknown type, limit or cursor.
func (s *EventsService) List(ctx context.Context, p *EventListParams) iter.Seq2[*Event, error] {
	if p == nil {
		p = &EventListParams{}
	}
	return paginate(ctx, p.Cursor, func(ctx context.Context, cursor string) (*Page[Event], error) {
		q := *p
		q.Cursor = cursor
		return s.ListPage(ctx, &q)
	})
}

// ListPage fetches one page of events starting at p.Cursor. Errors: as List.
func (s *EventsService) ListPage(ctx context.Context, p *EventListParams) (*Page[Event], error) {
	q := url.Values{}
	var params *Params
	if p != nil {
		if p.Limit > 0 {
			q.Set("limit", strconv.Itoa(p.Limit))
		}
		if p.Cursor != "" {
			q.Set("cursor", p.Cursor)
		}
		if p.Type != "" {
			q.Set("type", string(p.Type))
		}
		params = &p.Params
	}
	page := new(Page[Event])
	info, err := s.client.doJSON(ctx, http.MethodGet, "/v2/events", q, params, nil, page)
	if err != nil {
		return nil, err
	}
	page.LastResponse = info
	for _, e := range page.Data {
		if e != nil {
			e.LastResponse = info
		}
	}
	return page, nil
}

// Get fetches the event with the given id (GET /v2/events/{id}).
//
// Errors: *Error with 404 NOT_FOUND if it does not exist, belongs to another
// tenant or has expired (EVENT_TTL).
func (s *EventsService) Get(ctx context.Context, id string) (*Event, error) {
	if id == "" {
		return nil, errEmptyID
	}
	e := new(Event)
	info, err := s.client.doJSON(ctx, http.MethodGet, "/v2/events/"+url.PathEscape(id), nil, nil, nil, e)
	if err != nil {
		return nil, err
	}
	e.LastResponse = info
	return e, nil
}
