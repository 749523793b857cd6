package audithttp

import (
	"time"

	"github.com/riskapi/riskapi/internal/audit"
	"github.com/riskapi/riskapi/internal/ids"
)

// actorView is an entry's actor: id null for system, email only for a user.
type actorView struct {
	Type  string  `json:"type"`
	ID    *string `json:"id"`
	Email string  `json:"email,omitempty"`
}

// entryView is an entry as the API shows it (docs/openapi.yaml, AuditEntry):
// requestId, ip and userAgent are null for a CLI command.
type entryView struct {
	ID         string                 `json:"id"`
	OccurredAt time.Time              `json:"occurredAt"`
	Actor      actorView              `json:"actor"`
	Action     string                 `json:"action"`
	Target     audit.Target           `json:"target"`
	Changes    map[string]audit.Field `json:"changes"`
	RequestID  *string                `json:"requestId"`
	IP         *string                `json:"ip"`
	UserAgent  *string                `json:"userAgent"`
	// Livemode is false for an entry of the sandbox's audit log (docs/sandboxes.md).
	Livemode bool `json:"livemode"`
	// Via is "mcp" for a change asked by an MCP tool call, Client the MCP client's
	// name/version from its initialize; null otherwise (docs/mcp.md).
	Via    *string `json:"via"`
	Client *string `json:"client"`
}

func viewOf(e *audit.Entry) entryView {
	return entryView{ID: e.ID, OccurredAt: e.OccurredAt,
		Actor:  actorView{Type: e.Actor.Type, ID: nullable(e.Actor.ID), Email: e.Actor.Email},
		Action: e.Action, Target: e.Target, Changes: e.Changes,
		RequestID: nullable(e.RequestID), IP: nullable(e.IP), UserAgent: nullable(e.UserAgent),
		Livemode: ids.Livemode(e.TenantID),
		Via:      nullable(e.Via), Client: nullable(e.Client)}
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
