package riskapi

import (
	"context"
	"encoding/json"
	"iter"
	"net/url"
	"strconv"
	"time"
)

// AuditLogService reads the tenant's audit log (/v2/audit-log, scope audit:read)
// and a risk's history (scope risks:read). Reach it as Client.AuditLog. The log
// holds one entry per change to the tenant's data or credentials (the server's
// docs/audit-log.md).
type AuditLogService service

// AuditEntry is one recorded change.
type AuditEntry struct {
	// ID is "aud_…"; IDs sort by time.
	ID string `json:"id"`
	// OccurredAt is when the change committed (server clock).
	OccurredAt time.Time  `json:"occurredAt"`
	Actor      AuditActor `json:"actor"`
	// Action is "<target type>.<verb>", e.g. "risk.updated", "user.role_changed".
	Action AuditAction `json:"action"`
	Target AuditTarget `json:"target"`
	// Changes holds, per member of the target's public form that the change set,
	// altered or removed, its value before and after; nil when there is none to
	// list. A secret or password never appears: its AuditChange has Secret set.
	Changes map[string]AuditChange `json:"changes"`
	// RequestID, IP and UserAgent describe the request that made the change; empty
	// for a CLI command. IP is the client address as the server's TRUSTED_PROXIES
	// define it.
	RequestID string `json:"requestId"`
	IP        string `json:"ip"`
	UserAgent string `json:"userAgent"`
	// Livemode is false for test data: the tenant's sandbox, which test keys
	// (rk_test_…) reach (docs/sandboxes.md).
	Livemode bool `json:"livemode"`
	// Via is "mcp" when the change was asked by a tool call of the server's MCP
	// endpoint, and Client the MCP client's name/version from its initialize; both
	// empty for plain HTTP and CLI commands (docs/mcp.md).
	Via    string `json:"via"`
	Client string `json:"client"`

	// LastResponse describes the HTTP exchange that returned this entry.
	LastResponse *APIResponse `json:"-"`
}

func (e *AuditEntry) setLastResponse(info *APIResponse) { e.LastResponse = info }

// AuditActor is who made a change: Type "user" (with Email as it was then),
// "api_key", "webhook_source" or "system" (a CLI command; ID empty).
type AuditActor struct {
	Type  string `json:"type"`
	ID    string `json:"id"`
	Email string `json:"email"`
}

// AuditTarget is what a change was about: Type is Action's part before the dot.
type AuditTarget struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// AuditChange is one member's change: From and To are its JSON values (null where
// it had or has none). For a secret or password, Secret is true and both are nil:
// the log says only that it changed.
type AuditChange struct {
	From, To json.RawMessage
	Secret   bool
}

// UnmarshalJSON decodes {"from","to"} or the string "changed".
func (c *AuditChange) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*c = AuditChange{Secret: s == "changed"}
		return nil
	}
	var w struct {
		From json.RawMessage `json:"from"`
		To   json.RawMessage `json:"to"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = AuditChange{From: w.From, To: w.To}
	return nil
}

// AuditListParams select a listing of the audit log, newest first. A nil
// *AuditListParams lists every entry with the server's page size. Filters combine.
type AuditListParams struct {
	Params

	// Action, ActorID and TargetID, when set, keep only entries with that action
	// (ActionRiskUpdated), by that actor, about that resource.
	Action            AuditAction
	ActorID, TargetID string
	// Since and Until, when not zero, keep only entries with Since ≤ OccurredAt <
	// Until.
	Since, Until time.Time
	// Limit is the page size; 0 means the server's default.
	Limit int
	// Cursor starts the listing after an earlier page: a Page.NextCursor.
	Cursor string
}

func (p *AuditListParams) query() url.Values {
	q := url.Values{}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	for k, v := range map[string]string{"cursor": p.Cursor, "action": string(p.Action), "actorId": p.ActorID, "targetId": p.TargetID} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if !p.Since.IsZero() {
		q.Set("since", p.Since.UTC().Format(time.RFC3339Nano))
	}
	if !p.Until.IsZero() {
		q.Set("until", p.Until.UTC().Format(time.RFC3339Nano))
	}
	return q
}

// List returns the tenant's audit-log entries, newest first, as a sequence fetching
// pages as the loop advances (GET /v2/audit-log). On error it yields (nil, err)
// once and ends.
//
// Errors: *Error with 403 FORBIDDEN without the audit:read scope, 400
// VALIDATION_FAILED for an unknown action, a bad date, limit or cursor.
func (s *AuditLogService) List(ctx context.Context, p *AuditListParams) iter.Seq2[*AuditEntry, error] {
	if p == nil {
		p = &AuditListParams{}
	}
	return paginate(ctx, p.Cursor, func(ctx context.Context, cursor string) (*Page[AuditEntry], error) {
		q := *p
		q.Cursor = cursor
		return s.ListPage(ctx, &q)
	})
}

// ListPage fetches one page of the audit log starting at p.Cursor. Errors: as List.
func (s *AuditLogService) ListPage(ctx context.Context, p *AuditListParams) (*Page[AuditEntry], error) {
	if p == nil {
		p = &AuditListParams{}
	}
	return getPage[AuditEntry](ctx, s.client, "/v2/audit-log", p.query(), &p.Params)
}

// History returns the risk's entries, oldest first, as a sequence fetching pages
// of limit entries (0: the server's default) as the loop advances (GET
// /v2/risks/{id}/history). It works after the risk is deleted.
//
// Errors: *Error with 404 NOT_FOUND when the tenant has no entry for that risk, 403
// FORBIDDEN without risks:read.
func (s *AuditLogService) History(ctx context.Context, riskID string, limit int) iter.Seq2[*AuditEntry, error] {
	return paginate(ctx, "", func(ctx context.Context, cursor string) (*Page[AuditEntry], error) {
		if riskID == "" {
			return nil, errEmptyID
		}
		q := url.Values{}
		if limit > 0 {
			q.Set("limit", strconv.Itoa(limit))
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		return getPage[AuditEntry](ctx, s.client, riskPath(riskID)+"/history", q, nil)
	})
}
