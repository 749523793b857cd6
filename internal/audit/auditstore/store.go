// Package auditstore stores audit-log entries with GORM on SQLite or PostgreSQL, in
// the append-only audit_log table (migrations 0011, 0014). Its row type stays here.
package auditstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/audit"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/ids"
)

// Store implements audit.Store.
type Store struct{ db *gorm.DB }

var _ audit.Store = (*Store)(nil)

// New returns a Store over db. The table comes from riskapi's migrations.
func New(db *gorm.DB) *Store { return &Store{db: db} }

type row struct {
	ID         string
	TenantID   string
	OccurredAt time.Time `gorm:"autoCreateTime:false"`
	ActorType  string
	ActorID    string
	ActorEmail string
	Action     string
	TargetType string
	TargetID   string
	Changes    *string // JSON object, NULL when none
	RequestID  string
	IP         string `gorm:"column:ip"`
	UserAgent  string
	Via        *string // NULL for plain HTTP and CLI commands (migration 0018)
	Client     *string
	RiskID     *string // NULL but for an entry of a risk's attachment (migration 0030)
}

func (row) TableName() string { return "audit_log" }

func toRow(e *audit.Entry) (*row, error) {
	r := &row{ID: e.ID, TenantID: e.TenantID, OccurredAt: e.OccurredAt.UTC(), ActorType: e.Actor.Type,
		ActorID: e.Actor.ID, ActorEmail: e.Actor.Email, Action: e.Action, TargetType: e.Target.Type,
		TargetID: e.Target.ID, RequestID: e.RequestID, IP: e.IP, UserAgent: e.UserAgent,
		Via: orNull(e.Via), Client: orNull(e.Client), RiskID: orNull(e.RiskID)}
	if e.Changes != nil {
		b, err := audit.EncodeChanges(e.Changes)
		if err != nil {
			return nil, fmt.Errorf("audit entry changes: %w", err)
		}
		s := string(b)
		r.Changes = &s
	}
	return r, nil
}

func (r *row) toEntry() (*audit.Entry, error) {
	e := &audit.Entry{ID: r.ID, TenantID: r.TenantID, OccurredAt: r.OccurredAt.UTC(),
		Actor:  audit.Actor{Type: r.ActorType, ID: r.ActorID, Email: r.ActorEmail},
		Action: r.Action, Target: audit.Target{Type: r.TargetType, ID: r.TargetID},
		RequestID: r.RequestID, IP: r.IP, UserAgent: r.UserAgent}
	if r.Via != nil {
		e.Via = *r.Via
	}
	if r.Client != nil {
		e.Client = *r.Client
	}
	if r.RiskID != nil {
		e.RiskID = *r.RiskID
	}
	if r.Changes != nil {
		if err := json.Unmarshal([]byte(*r.Changes), &e.Changes); err != nil {
			return nil, fmt.Errorf("audit entry %s changes: %w", r.ID, err)
		}
	}
	return e, nil
}

// Insert adds e in the transaction ctx carries, if any. A plain INSERT rather than
// GORM's Create: it runs on every write, and Create's reflection cost a write
// noticeably more CPU. On PostgreSQL it is deferred (database.Defer) to ride along
// with the change's event INSERT, saving the write a statement and a round trip
// (docs/performance.md); its errors then surface there.
func (s *Store) Insert(ctx context.Context, e *audit.Entry) error {
	r, err := toRow(e)
	if err != nil {
		return err
	}
	err = database.Defer(ctx, s.db, insertSQL, r.ID, r.TenantID, r.OccurredAt, r.ActorType, r.ActorID, r.ActorEmail,
		r.Action, r.TargetType, r.TargetID, r.Changes, r.RequestID, r.IP, r.UserAgent, r.Via, r.Client, r.RiskID)
	if err != nil {
		return fmt.Errorf("insert audit entry: %w", err)
	}
	return nil
}

// InsertMany adds es in the transaction ctx carries, in multi-row INSERTs
// (database.InsertRows): an import's entries in one statement per thousand rows.
func (s *Store) InsertMany(ctx context.Context, es []*audit.Entry) error {
	rows := make([][]any, len(es))
	for i, e := range es {
		r, err := toRow(e)
		if err != nil {
			return err
		}
		rows[i] = []any{r.ID, r.TenantID, r.OccurredAt, r.ActorType, r.ActorID, r.ActorEmail,
			r.Action, r.TargetType, r.TargetID, r.Changes, r.RequestID, r.IP, r.UserAgent, r.Via, r.Client, r.RiskID}
	}
	if err := database.InsertRows(ctx, s.db, "audit_log", insertColumns, rows); err != nil {
		return fmt.Errorf("insert audit entries: %w", err)
	}
	return nil
}

// insertColumns are insertSQL's columns, in its order.
var insertColumns = []string{"id", "tenant_id", "occurred_at", "actor_type", "actor_id", "actor_email", "action",
	"target_type", "target_id", "changes", "request_id", "ip", "user_agent", "via", "client", "risk_id"}

// orNull is s, or NULL when empty.
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

const insertSQL = `INSERT INTO audit_log (id, tenant_id, occurred_at, actor_type, actor_id, actor_email, action,
	target_type, target_id, changes, request_id, ip, user_agent, via, client, risk_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// tenant is the tenant's entries, in the transaction ctx carries if any, but a
// pending import's (database.Published).
func (s *Store) tenant(ctx context.Context, tenantID string) *gorm.DB {
	return database.Conn(ctx, s.db).Model(&row{}).Scopes(database.OfTenant(tenantID), database.Published(tenantID, "import_id"))
}

// List returns a page of the tenant's entries matching f (database.Page), through
// the (tenant, id) or (tenant, target, id) index, and for a risk's history also
// (tenant, risk_id, id).
func (s *Store) List(ctx context.Context, tenantID string, f audit.Filter) ([]*audit.Entry, bool, error) {
	q := s.tenant(ctx, tenantID)
	for _, c := range [...]struct{ col, v string }{{"action", f.Action}, {"actor_id", f.ActorID},
		{"target_id", f.TargetID}, {"target_type", f.TargetType}} {
		if c.v != "" {
			q = q.Where(c.col+" = ?", c.v)
		}
	}
	if f.RiskID != "" {
		// Through (tenant, target, id) for the risk's own entries and the partial
		// (tenant, risk_id, id) for its attachments'.
		q = q.Where("((target_type = 'risk' AND target_id = ?) OR risk_id = ?)", f.RiskID, f.RiskID)
	}
	if !f.Since.IsZero() {
		q = q.Where("occurred_at >= ?", f.Since.UTC())
	}
	if !f.Until.IsZero() {
		q = q.Where("occurred_at < ?", f.Until.UTC())
	}
	order := database.NewestFirst
	if f.OldestFirst {
		order = database.OldestFirst
	}
	rows, more, err := database.Page(q, order, f.After, f.Limit, func(r *row) *row { return r })
	if err != nil {
		return nil, false, fmt.Errorf("list audit entries: %w", err)
	}
	out := make([]*audit.Entry, len(rows))
	for i, r := range rows {
		e, err := r.toEntry()
		if err != nil {
			return nil, false, err
		}
		out[i] = e
	}
	return out, more, nil
}

// DeleteBefore deletes up to limit entries that occurred before t, oldest first, in
// one statement: the retention sweep's batch, the only deletion of entries. It goes
// by the primary key: IDs are UUIDv7 of the entry's time (audit.Entry), so the
// entries minted before t's millisecond are a range of it, and the table needs no
// index on occurred_at, which every write would pay for (migration 0014).
func (s *Store) DeleteBefore(ctx context.Context, t time.Time, limit int) (int, error) {
	conn := database.Conn(ctx, s.db)
	sub := conn.Session(&gorm.Session{NewDB: true}).Model(&row{}).Select("id").
		Where("id < ?", ids.Before(ids.Audit, t)).Order("id").Limit(limit)
	res := conn.Where("id IN (?)", sub).Delete(&row{})
	if res.Error != nil {
		return 0, fmt.Errorf("sweep audit log: %w", res.Error)
	}
	return int(res.RowsAffected), nil
}
