package requestloghttp

import (
	"time"

	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/requestlog"
)

// entryResponse is an entry as docs/requests.md shows it: absent members are null.
type entryResponse struct {
	ID                 string             `json:"id"`
	Method             string             `json:"method"`
	Path               string             `json:"path"`
	Route              string             `json:"route"`
	Status             int                `json:"status"`
	DurationMs         float64            `json:"durationMs"`
	Credential         credentialResponse `json:"credential"`
	IdempotencyKey     *string            `json:"idempotencyKey"`
	IdempotencyOutcome *string            `json:"idempotencyOutcome"`
	ErrorCode          *string            `json:"errorCode"`
	// StoreOutcome is a 503 STORE_UNAVAILABLE's "outcome": not_executed or unknown.
	StoreOutcome *string `json:"storeOutcome"`
	// APIVersion is the version the request was read and answered in.
	APIVersion *string   `json:"apiVersion"`
	CreatedAt  time.Time `json:"createdAt"`
	// Livemode is false for a request made in test mode (docs/sandboxes.md).
	Livemode bool `json:"livemode"`
	// Via is "mcp" for a tool call of the MCP server, Client its client's
	// name/version; null for plain HTTP (docs/mcp.md).
	Via    *string `json:"via"`
	Client *string `json:"client"`
}

type credentialResponse struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toResponse(e *requestlog.Entry) entryResponse {
	return entryResponse{ID: e.RequestID, Method: e.Method, Path: e.Path, Route: e.Route, Status: e.Status,
		DurationMs:     float64(e.Duration.Microseconds()) / 1000,
		Credential:     credentialResponse{Type: e.Credential.Type, ID: e.Credential.ID},
		IdempotencyKey: orNull(e.IdempotencyKey), IdempotencyOutcome: orNull(string(e.IdempotencyOutcome)),
		ErrorCode: orNull(e.ErrorCode), StoreOutcome: orNull(e.StoreOutcome), APIVersion: orNull(e.APIVersion), CreatedAt: e.CreatedAt.UTC(),
		Livemode: ids.Livemode(e.TenantID),
		Via:      orNull(e.Via), Client: orNull(e.Client)}
}

func entryID(e *requestlog.Entry) string { return e.ID }

// keyResponse is what the key inspector says of one idempotency key. While the key
// is processing nothing is settled yet: statusCode, the times and requestId are null.
type keyResponse struct {
	Key        string     `json:"key"`
	Method     string     `json:"method"`
	Path       string     `json:"path"`
	State      string     `json:"state"`
	StatusCode *int       `json:"statusCode"`
	CreatedAt  *time.Time `json:"createdAt"`
	ExpiresAt  *time.Time `json:"expiresAt"`
	RequestID  *string    `json:"requestId"`
	// Livemode is the mode of the records the inspector looked in, the caller's
	// (docs/sandboxes.md).
	Livemode bool `json:"livemode"`
}

func toKeyResponse(k idempotency.RecordKey, state string, rec *idempotency.Record, livemode bool) keyResponse {
	out := keyResponse{Key: k.Key, Method: k.Method, Path: k.Path, State: state, Livemode: livemode}
	if state == stateProcessing || rec == nil {
		return out
	}
	// To the microsecond, as every time of the API (docs/openapi.yaml): SQLite keeps
	// the engine's nanoseconds.
	created, expires := rec.CreatedAt.UTC().Truncate(time.Microsecond), rec.ExpiresAt.UTC().Truncate(time.Microsecond)
	out.CreatedAt, out.ExpiresAt = &created, &expires
	if rec.StatusCode != 0 {
		out.StatusCode = &rec.StatusCode
	}
	out.RequestID = orNull(rec.RequestID)
	return out
}
