package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	riskauth "github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/tenants"
)

// KeyPeeker reads an idempotency key's record and whether a request holds the key,
// without taking or waiting for its lock: the key inspector's reader
// (gormstore.Store.Peek, docs/requests.md).
type KeyPeeker interface {
	Peek(ctx context.Context, k idempotency.RecordKey) (rec *idempotency.Record, locked bool, err error)
}

// What get_write_outcome answers (contract section 22).
const (
	outcomeCompleted = "completed"
	outcomeInFlight  = "in_flight"
	outcomeFailed    = "failed"
	outcomeNotFound  = "not_found"
)

const outcomeToolName = "get_write_outcome"

// outcomeTool describes get_write_outcome; its arguments' schemas and the record's
// fields are the spec's (the IdempotencyKey and RiskId parameters, IdempotencyKeyState).
func (s *spec) outcomeTool() (*mcp.Tool, error) {
	params, err := s.parameters(http.MethodPatch, "/v2/risks/{id}")
	if err != nil {
		return nil, err
	}
	in := map[string]any{"type": "object", "additionalProperties": false, "required": []any{argKey}}
	props := map[string]any{}
	for _, p := range params {
		switch p["name"] {
		case "Idempotency-Key":
			if props[argKey], err = s.jsonSchema(p["schema"], 0); err != nil {
				return nil, err
			}
		case "id":
			sch, err := s.jsonSchema(p["schema"], 0)
			if err != nil {
				return nil, err
			}
			sch["description"] = "The risk an update_risk or delete_risk call named: needed to find those writes (a create or an import is found by the key alone)."
			props[argRiskID] = sch
		}
	}
	in["properties"] = props
	state, err := s.jsonSchema(map[string]any{"$ref": "#/components/schemas/IdempotencyKeyState"}, 0)
	if err != nil {
		return nil, err
	}
	outProps := map[string]any{
		"outcome": map[string]any{"type": "string", "enum": []any{outcomeCompleted, outcomeInFlight, outcomeFailed, outcomeNotFound},
			"description": "completed: the write committed; result is its stored answer, and a retry with the same key and arguments replays it. in_flight: a call holds the key now; retry after retryAfter seconds. failed: its last attempt was rolled back; a retry runs it again. not_found: no live record (never sent, expired, or another tenant's): a retry runs it."},
		"result":     map[string]any{"description": "The stored answer's body (completed only)."},
		"retryAfter": map[string]any{"type": "integer"},
	}
	for name, p := range state["properties"].(map[string]any) {
		if name != "state" && name != "key" {
			outProps[name] = p
		}
	}
	out := map[string]any{"type": "object", "required": []any{"outcome"}, "properties": outProps}
	no := false
	return &mcp.Tool{Name: outcomeToolName, Title: "What became of a write",
		Description: "Tells what became of a write tool call from its idempotencyKey, without sending it again: completed (with the stored result), in_flight, failed or not_found. Reads the key inspector's records (GET /v2/idempotency-keys/{key}).",
		InputSchema: in, OutputSchema: out,
		Annotations: &mcp.ToolAnnotations{Title: "What became of a write", ReadOnlyHint: true, IdempotentHint: true,
			DestructiveHint: &no, OpenWorldHint: &no}}, nil
}

const argRiskID = "riskId"

// candidate is a route a write tool's key may have been used on.
type candidate struct{ method, path string }

// candidates are the routes of the write tools a key may name: creates and imports
// by the key alone, a risk's update and delete (PUT too, for HTTP clients) when
// riskId says which.
func candidates(riskID string) []candidate {
	cs := []candidate{{http.MethodPost, "/v2/risks"}, {http.MethodPost, "/v2/risks/import"}}
	if riskID != "" {
		p := "/v2/risks/" + url.PathEscape(riskID)
		cs = append(cs, candidate{http.MethodPatch, p}, candidate{http.MethodDelete, p}, candidate{http.MethodPut, p})
	}
	return cs
}

// writeOutcome answers get_write_outcome from the tenant's records. It needs
// risks:write, the scope of the writes it reports on.
func writeOutcome(keys KeyPeeker, scopeOf func(context.Context) (string, error), now func() time.Time) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var p *riskauth.Principal
		if req.Extra != nil && req.Extra.TokenInfo != nil {
			p, _ = req.Extra.TokenInfo.Extra[extraPrincipal].(*riskauth.Principal)
		}
		if p == nil {
			return refused(&callError{"UNAUTHENTICATED", "authentication required"}), nil
		}
		if !p.Has(tenants.ScopeRisksWrite) {
			return structured(map[string]any{"type": "about:blank", "status": http.StatusForbidden, "code": "FORBIDDEN",
				"detail": "this credential lacks the risks:write scope"}, true), nil
		}
		args, cerr := arguments(req.Params.Arguments)
		if cerr != nil {
			return refused(cerr), nil
		}
		for name := range args {
			if name != argKey && name != argRiskID {
				return refused(&callError{"VALIDATION_FAILED", "get_write_outcome takes no argument " + name}), nil
			}
		}
		key, err := stringArg(args, argKey)
		var ce *callError
		if errors.As(err, &ce) {
			return refused(ce), nil
		}
		riskID, err := stringArg(args, argRiskID)
		if errors.As(err, &ce) {
			return refused(ce), nil
		}
		if !idempotency.ValidKey(key) {
			return refused(&callError{"IDEMPOTENCY_KEY_INVALID", "idempotencyKey must match ^[A-Za-z0-9._-]{8,128}$"}), nil
		}
		scope, err := scopeOf(riskauth.WithPrincipal(ctx, p))
		if err != nil {
			return refused(&callError{"UNAUTHENTICATED", "authentication required"}), nil
		}
		out, err := lookUp(ctx, keys, scope, key, riskID, now())
		if err != nil {
			// Nothing was run by a lookup: whatever the store's state, retrying is safe.
			return structured(map[string]any{"type": "about:blank", "status": http.StatusServiceUnavailable,
				"code": "STORE_UNAVAILABLE", "detail": "the idempotency records cannot be read now", "outcome": "not_executed",
				"retryAfter": 1}, true), nil
		}
		return structured(out, false), nil
	}
}

// lookUp reads key on each candidate route, in the inspector's order of trust: a
// live COMPLETE record, then a held key, then a live FAILED record.
func lookUp(ctx context.Context, keys KeyPeeker, scope, key, riskID string, now time.Time) (map[string]any, error) {
	var inFlight, failed map[string]any
	for _, c := range candidates(riskID) {
		rec, locked, err := keys.Peek(ctx, idempotency.RecordKey{Scope: scope, Method: c.method, Path: c.path, Key: key})
		if err != nil {
			return nil, err
		}
		live := rec != nil && rec.Live(now)
		switch {
		case live && rec.State == idempotency.StateComplete:
			out := map[string]any{"outcome": outcomeCompleted, "method": c.method, "path": c.path,
				"statusCode": rec.StatusCode, "createdAt": rec.CreatedAt.UTC(), "expiresAt": rec.ExpiresAt.UTC(),
				"requestId": rec.RequestID}
			if len(rec.Body) > 0 && json.Valid(rec.Body) {
				out["result"] = json.RawMessage(rec.Body)
			}
			return out, nil
		case locked && inFlight == nil:
			inFlight = map[string]any{"outcome": outcomeInFlight, "method": c.method, "path": c.path, "retryAfter": 1}
		case live && rec.State == idempotency.StateFailed && failed == nil:
			failed = map[string]any{"outcome": outcomeFailed, "method": c.method, "path": c.path,
				"createdAt": rec.CreatedAt.UTC(), "expiresAt": rec.ExpiresAt.UTC(), "requestId": rec.RequestID}
		}
	}
	if inFlight != nil {
		return inFlight, nil
	}
	if failed != nil {
		return failed, nil
	}
	return map[string]any{"outcome": outcomeNotFound}, nil
}
