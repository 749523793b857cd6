// Package sandboxstore erases a sandbox's data with GORM, on SQLite or PostgreSQL.
package sandboxstore

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/sandbox"
)

// Store implements sandbox.Store.
type Store struct {
	db    *gorm.DB
	point changes.Point
}

var _ sandbox.Store = (*Store)(nil)

// New returns a Store over db whose erasures record through rec (the audit log).
func New(db *gorm.DB, rec changes.Recorder) *Store {
	return &Store{db: db, point: changes.Point{Tx: database.NewRunner(db), Recorder: rec}}
}

// Erased are the tables whose rows of the sandbox EraseData deletes, in an order
// that deletes what refers to a row before it (a delivery before its event) and
// the heat counts after the risks whose deletion adds to them. Kept (Kept) are the
// tables of the tenant's configuration. sandboxstore's test fails when a table
// keyed by tenant is in neither list.
var Erased = []string{"webhook_attempts", "webhook_deliveries", "events", "due_notices", "acceptances",
	"risk_actions", "risk_reviews", "attachments", "risks",
	"risk_heat_counts", "register_snapshots", "request_log_entries", "audit_log"}

// Kept are the tables keyed by tenant whose sandbox rows EraseData keeps: its
// endpoints, inbound sources and category appetites, configuration like them (the
// API keys, users and sessions are the tenant's, never the sandbox's), and a
// running import's pending row, which its own request publishes or its take-back
// deletes (docs/register.md "Import").
var Kept = []string{"webhook_endpoints", "webhook_sources", "category_appetites", "api_keys", "users", "sessions",
	"pending_imports"}

// EraseData implements sandbox.Store.
func (s *Store) EraseData(ctx context.Context, tenantID string) (sandbox.Erased, error) {
	out := sandbox.Of(tenantID)
	err := s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		out = sandbox.Of(tenantID) // a retried unit of work counts again
		// A delivery is counted once whether it waits in the queue, is logged
		// (delivered, failed, skipped: webhook_attempts) or both (a retry pending):
		// counting the queue alone answered 0 once every delivery had gone through.
		if err := s.countDeliveries(ctx, out.ID, &out.Deliveries); err != nil {
			return changes.Change{}, err
		}
		counts := map[string]*int64{"events": &out.Events, "attachments": &out.Attachments, "risks": &out.Risks,
			"request_log_entries": &out.RequestLog, "audit_log": &out.AuditLog}
		conn := database.Conn(ctx, s.db)
		// Inbound findings are keyed by source: those of the sandbox's sources.
		res := conn.Table("webhook_events").Where("source_id IN (?)", s.tenant(ctx, "webhook_sources", out.ID).Select("id")).
			Delete(map[string]any{})
		if res.Error != nil {
			return changes.Change{}, fmt.Errorf("erase sandbox inbound findings: %w", res.Error)
		}
		out.InboundFindings = res.RowsAffected
		for _, table := range Erased {
			res := s.tenant(ctx, table, out.ID).Delete(map[string]any{})
			if res.Error != nil {
				return changes.Change{}, fmt.Errorf("erase sandbox %s: %w", table, res.Error)
			}
			if n := counts[table]; n != nil {
				*n = res.RowsAffected
			}
		}
		res = conn.Table("idempotency_records").Where("scope = ?", out.ID).Delete(map[string]any{})
		if res.Error != nil {
			return changes.Change{}, fmt.Errorf("erase sandbox idempotency records: %w", res.Error)
		}
		out.IdempotencyKeys = res.RowsAffected
		return changes.Change{TenantID: tenantID, Action: changes.SandboxDataDeleted,
			Target: changes.Target{ID: out.ID}, Before: out}, nil
	})
	return out, err
}

// tenant is a statement on the rows of table of the scope tenantID (a tenant or a
// sandbox), in ctx's unit of work.
func (s *Store) tenant(ctx context.Context, table, tenantID string) *gorm.DB {
	return database.Conn(ctx, s.db).Table(table).Scopes(database.OfTenant(tenantID))
}

// countDeliveries sets *n to how many deliveries of the scope's events there are:
// those queued and those in the delivery log, each once.
func (s *Store) countDeliveries(ctx context.Context, scope string, n *int64) error {
	err := database.Conn(ctx, s.db).Raw(`SELECT COUNT(*) FROM (
		SELECT delivery_id AS id FROM webhook_attempts WHERE tenant_id = ?
		UNION SELECT id FROM webhook_deliveries WHERE tenant_id = ?) d`, scope, scope).Scan(n).Error
	if err != nil {
		return fmt.Errorf("count sandbox deliveries: %w", err)
	}
	return nil
}
