// Package audit is the tenant's audit log (docs/audit-log.md): one entry per change
// to a tenant's data or credentials — who (actor), what (action, target, changes),
// from where (request id, client address, user agent) — written by Recorder at the
// recording point (internal/changes), in the change's own transaction. Entries are
// never changed or deleted but by the retention sweep. It knows nothing of HTTP or
// SQL.
package audit

import (
	"context"
	"encoding/json"
	"time"

	"github.com/riskapi/riskapi/internal/changes"
)

// Actor is who made a change: Type is "user", "api_key", "webhook_source" or
// "system"; ID is empty for system; Email is a user's, as it was then.
type Actor struct {
	Type  string `json:"type"`
	ID    string `json:"id"`
	Email string `json:"email,omitempty"`
}

// Target is what a change is about: Type is the action's part before the dot.
type Target struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// Field is one member's change: its JSON value before (null when it had none) and
// after (null when it has none). A secret (Secret true) has neither: its JSON is the
// string "changed".
type Field struct {
	From   json.RawMessage `json:"from"`
	To     json.RawMessage `json:"to"`
	Secret bool            `json:"-"`
}

// secretChanged is how a secret or password member's change is shown.
var secretChanged = []byte(`"changed"`)

// MarshalJSON implements json.Marshaler: {"from","to"}, or "changed" for a secret.
func (f Field) MarshalJSON() ([]byte, error) {
	if f.Secret {
		return secretChanged, nil
	}
	type plain Field
	return json.Marshal(plain(f))
}

// UnmarshalJSON implements json.Unmarshaler, the inverse of MarshalJSON.
func (f *Field) UnmarshalJSON(b []byte) error {
	if string(b) == string(secretChanged) {
		*f = Field{Secret: true}
		return nil
	}
	type plain Field
	return json.Unmarshal(b, (*plain)(f))
}

// Entry is one audit-log entry (docs/openapi.yaml, AuditEntry). Changes is nil when
// the action changes no field (session.created, …). RequestID, IP and UserAgent are
// empty for a CLI command.
type Entry struct {
	// ID is "aud_…", a UUIDv7 of OccurredAt's millisecond (ids.NewAt): ID order is
	// time order, and the sweep finds old entries by their ID.
	ID         string           `json:"id"`
	TenantID   string           `json:"-"`
	OccurredAt time.Time        `json:"occurredAt"` // UTC, microseconds
	Actor      Actor            `json:"actor"`
	Action     string           `json:"action"`
	Target     Target           `json:"target"`
	Changes    map[string]Field `json:"changes"`
	RequestID  string           `json:"requestId"`
	IP         string           `json:"ip"`
	UserAgent  string           `json:"userAgent"`
	// Via is "mcp" when the change was asked by a tool call of the MCP server, and
	// Client the MCP client's name/version; "" otherwise (docs/mcp.md).
	Via    string `json:"via"`
	Client string `json:"client"`
	// RiskID is the risk the target belongs to when the target is not a risk itself
	// (an attachment, changes.RiskOf), so that the risk's history lists the entry;
	// "" otherwise.
	RiskID string `json:"-"`
}

// Actions lists every action the log records (contract section 14), in
// documentation order: every action of changes.Registry, since every recorded change
// has its entry. A filter naming another matches nothing and is refused.
var Actions = changes.Names[string](nil)

// Filter selects a tenant's entries. Empty members select everything.
type Filter struct {
	Action   string
	ActorID  string
	TargetID string
	// TargetType, with TargetID, narrows to one resource's entries.
	TargetType string
	// RiskID selects a risk's history: the entries whose target is the risk and those
	// of the resources that belong to it (Entry.RiskID: its attachments).
	RiskID string
	// Since and Until bound OccurredAt: Since ≤ occurredAt < Until; zero: unbounded.
	Since, Until time.Time
	// After is the cursor: the ID of the last entry of the previous page ("": from
	// the start). Newest first, the page continues with older entries; OldestFirst,
	// with newer ones.
	After       string
	OldestFirst bool
	Limit       int // 1–1000
}

// Store persists entries (internal/audit/auditstore). Insert writes through the
// transaction ctx carries; nothing updates an entry.
type Store interface {
	// Insert adds e.
	Insert(ctx context.Context, e *Entry) error
	// InsertMany adds es, as Insert each would, in fewer statements (a batch
	// write's entries).
	InsertMany(ctx context.Context, es []*Entry) error
	// List returns up to f.Limit of the tenant's entries matching f in f's order, and
	// whether more follow.
	List(ctx context.Context, tenantID string, f Filter) ([]*Entry, bool, error)
	// DeleteBefore deletes up to limit entries (of any tenant) that occurred before t,
	// oldest first, and returns how many: the retention sweep's batch. It may go by
	// the entries' IDs (Entry.ID), and so keep those of t's own millisecond.
	DeleteBefore(ctx context.Context, t time.Time, limit int) (int, error)
}
