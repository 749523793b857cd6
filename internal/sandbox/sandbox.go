// Package sandbox is a tenant's test mode (contract section 18, docs/sandboxes.md):
// its sandbox is a data scope of its own (ids.SandboxOf), which a test key, or a
// session that asks for test data, reads and writes instead of the tenant's live
// data. Nothing here keeps the two apart — every store keys its rows by the scope
// the request's credential gives (auth.Principal.Scope) — this package erases the
// sandbox's data when its tenant's admin asks.
package sandbox

import (
	"context"

	"github.com/riskapi/riskapi/internal/ids"
)

// Erased counts what erasing a sandbox's data deleted, by kind. It is the view of
// the sandbox.data_deleted audit entry (its Before: the data as it was) and of the
// answer to DELETE /v1/sandbox/data.
type Erased struct {
	// ID is the sandbox's (ids.SandboxOf of the tenant).
	ID string `json:"id"`
	// Livemode is always false: a sandbox is test data.
	Livemode    bool  `json:"livemode"`
	Risks       int64 `json:"risks"`
	Attachments int64 `json:"attachments"`
	Events      int64 `json:"events"`
	// Deliveries counts each delivery once, queued or logged (webhook_attempts).
	Deliveries      int64 `json:"deliveries"`
	IdempotencyKeys int64 `json:"idempotencyKeys"`
	RequestLog      int64 `json:"requestLogEntries"`
	AuditLog        int64 `json:"auditLogEntries"`
	InboundFindings int64 `json:"inboundFindings"`
}

// Resource implements changes.View.
func (Erased) Resource() string { return "sandbox" }

// Store erases a sandbox's data.
type Store interface {
	// EraseData deletes every row of the tenant's sandbox but its API keys (which
	// belong to the tenant), webhook endpoints and webhook sources (its
	// configuration), in one unit of work that records sandbox.data_deleted in the
	// tenant's (live) audit log, so the record outlives the next erasure. The bytes
	// of erased attachments are left to the orphan sweep.
	EraseData(ctx context.Context, tenantID string) (Erased, error)
}

// Of returns the empty count of tenantID's sandbox.
func Of(tenantID string) Erased { return Erased{ID: ids.SandboxOf(tenantID)} }
