package riskapi

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// RequestsService reads the tenant's request log (/v2/requests, docs/requests.md):
// one entry per request that authenticated to the tenant. Reach it as
// Client.Requests. The API key needs the requests:read scope.
type RequestsService service

// RequestCredential names the credential that sent a logged request: Type
// "api_key" or "session", and the key's or the session user's ID (never a
// secret).
type RequestCredential struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// LoggedRequest is one entry of the request log.
type LoggedRequest struct {
	// ID is the request id: the X-Request-Id its response carried, and
	// APIResponse.RequestID (or Error.RequestID) on the SDK's side.
	ID     string `json:"id"`
	Method string `json:"method"`
	// Path is the request's path, without its query.
	Path string `json:"path"`
	// Route is the route that served it, e.g. "/v2/risks/:id".
	Route string `json:"route"`
	// Status is the HTTP status it was answered with.
	Status int `json:"status"`
	// DurationMs is the time the server spent on it, in milliseconds.
	DurationMs float64           `json:"durationMs"`
	Credential RequestCredential `json:"credential"`
	// IdempotencyKey is the key it was sent with; empty without one.
	IdempotencyKey string `json:"idempotencyKey"`
	// IdempotencyOutcome is empty for reads and for writes without a key.
	IdempotencyOutcome IdempotencyOutcome `json:"idempotencyOutcome"`
	// ErrorCode is the problem code of a 4xx/5xx answer; empty otherwise.
	ErrorCode string    `json:"errorCode"`
	CreatedAt time.Time `json:"createdAt"`
	// Livemode is false for test data: the tenant's sandbox, which test keys
	// (rk_test_…) reach (docs/sandboxes.md).
	Livemode bool `json:"livemode"`

	// LastResponse describes the HTTP exchange that returned this entry.
	LastResponse *APIResponse `json:"-"`
}

// RequestListParams filters and pages the request log. Zero fields do not
// filter; a nil *RequestListParams lists everything, newest first.
type RequestListParams struct {
	Params

	// Limit is the page size; 0 means the server's default.
	Limit int
	// Cursor starts the listing after an earlier page: a Page.NextCursor.
	Cursor string
	// IdempotencyKey lists the attempts made with this key.
	IdempotencyKey string
	// Status lists requests answered with this HTTP status.
	Status int
	// Method lists requests with this method (GET, POST, PUT, PATCH, DELETE).
	Method string
	// Outcome lists keyed writes with this idempotency outcome.
	Outcome IdempotencyOutcome
	// Since and Until bound when requests were logged: Since ≤ t < Until.
	Since, Until time.Time
}

func (p *RequestListParams) query() url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Status > 0 {
		q.Set("status", strconv.Itoa(p.Status))
	}
	set("cursor", p.Cursor)
	set("idempotencyKey", p.IdempotencyKey)
	set("method", p.Method)
	set("outcome", string(p.Outcome))
	if !p.Since.IsZero() {
		q.Set("since", p.Since.UTC().Format(time.RFC3339Nano))
	}
	if !p.Until.IsZero() {
		q.Set("until", p.Until.UTC().Format(time.RFC3339Nano))
	}
	return q
}

// List returns the tenant's logged requests matching p, newest first, as a
// sequence fetching pages as the loop advances (like Risks.List). On error it
// yields (nil, err) once and ends.
func (s *RequestsService) List(ctx context.Context, p *RequestListParams) iter.Seq2[*LoggedRequest, error] {
	if p == nil {
		p = &RequestListParams{}
	}
	return paginate(ctx, p.Cursor, func(ctx context.Context, cursor string) (*Page[LoggedRequest], error) {
		q := *p
		q.Cursor = cursor
		return s.ListPage(ctx, &q)
	})
}

// ListPage fetches one page of the request log starting at p.Cursor.
//
// Errors: *Error with 400 VALIDATION_FAILED for a bad filter, limit or cursor;
// 403 FORBIDDEN without the requests:read scope.
func (s *RequestsService) ListPage(ctx context.Context, p *RequestListParams) (*Page[LoggedRequest], error) {
	if p == nil {
		p = &RequestListParams{}
	}
	return getPage[LoggedRequest](ctx, s.client, "/v2/requests", p.query(), &p.Params)
}

func (r *LoggedRequest) setLastResponse(info *APIResponse) { r.LastResponse = info }

// Get fetches the log entry of the request with the given request id
// (GET /v2/requests/{id}).
//
// Errors: *Error with 404 NOT_FOUND (unknown, expired or another tenant's),
// 403 FORBIDDEN without the requests:read scope.
func (s *RequestsService) Get(ctx context.Context, id string) (*LoggedRequest, error) {
	if id == "" {
		return nil, errEmptyID
	}
	r := new(LoggedRequest)
	info, err := s.client.doJSON(ctx, http.MethodGet, "/v2/requests/"+url.PathEscape(id), nil, nil, nil, r)
	if err != nil {
		return nil, err
	}
	r.LastResponse = info
	return r, nil
}

// IdempotencyKeysService inspects idempotency keys (/v2/idempotency-keys):
// what became of a write, without sending it again. Reach it as
// Client.IdempotencyKeys. The API key needs the requests:read scope.
type IdempotencyKeysService service

// KeyState is the state of an idempotency key.
type KeyState string

// The states of a key the server reports; an absent key is a 404 *Error.
const (
	// KeyProcessing: a request holds the key now; retry later with the same key.
	KeyProcessing KeyState = "processing"
	// KeyComplete: it succeeded; a retry with the same key replays its answer.
	KeyComplete KeyState = "complete"
	// KeyFailed: its last attempt was rolled back; a retry runs it again.
	KeyFailed KeyState = "failed"
)

// IdempotencyKey is what the server knows of one key.
type IdempotencyKey struct {
	Key    string   `json:"key"`
	Method string   `json:"method"`
	Path   string   `json:"path"`
	State  KeyState `json:"state"`
	// StatusCode is the stored response's status; nil unless complete.
	StatusCode *int `json:"statusCode"`
	// CreatedAt and ExpiresAt are nil while processing.
	CreatedAt *time.Time `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt"`
	// RequestID is the id of the request that settled the key; empty while
	// processing.
	RequestID string `json:"requestId"`
	// Livemode is false for a key of the sandbox (a test key's, docs/sandboxes.md).
	Livemode bool `json:"livemode"`

	// LastResponse describes the HTTP exchange that returned this state.
	LastResponse *APIResponse `json:"-"`
}

// Get looks up key as sent with method and path, e.g. ("…", "POST",
// "/v2/risks"): GET /v2/idempotency-keys/{key}?method=&path=.
//
// Errors: *Error with 404 NOT_FOUND when the tenant has no live record for it
// (never sent, expired, or failed before running — retrying runs it), 400
// VALIDATION_FAILED for a method or path no write has, 403 FORBIDDEN without
// the requests:read scope.
func (s *IdempotencyKeysService) Get(ctx context.Context, key, method, path string) (*IdempotencyKey, error) {
	if key == "" {
		return nil, errEmptyID
	}
	k := new(IdempotencyKey)
	q := url.Values{"method": {method}, "path": {path}}
	info, err := s.client.doJSON(ctx, http.MethodGet, "/v2/idempotency-keys/"+url.PathEscape(key), q, nil, nil, k)
	if err != nil {
		return nil, err
	}
	k.LastResponse = info
	return k, nil
}
