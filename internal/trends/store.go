package trends

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskstore"
)

// Store counts registers and keeps their snapshots in register_snapshots
// (migration 0026), and reads score histories from the audit log.
type Store struct {
	db *gorm.DB
}

// NewStore returns a Store over db.
func NewStore(db *gorm.DB) *Store { return &Store{db: db} }

var _ SnapshotStore = (*Store)(nil)

type snapshotRow struct {
	TenantID string
	Day      string
	Counts   string
	TakenAt  time.Time `gorm:"autoCreateTime:false"`
	// StaleFrom is the audit-log ID from which an entry of the tenant makes the
	// snapshot stale (migration 0028); nil: stale.
	StaleFrom *string
}

func (snapshotRow) TableName() string { return "register_snapshots" }

func (s *Store) tenant(ctx context.Context, tenantID string) *gorm.DB {
	return database.Conn(ctx, s.db).Scopes(database.OfTenant(tenantID))
}

// Due implements SnapshotStore: a tenant whose snapshot of day is stale, its audit
// log having an entry from the snapshot's StaleFrom on (one probe of the audit log's
// (tenant_id, id) index per tenant). Sandboxes have registers too, and snapshots.
func (s *Store) Due(ctx context.Context, day string, limit int) ([]string, error) {
	var ids []string
	err := database.Conn(ctx, s.db).Raw(`SELECT t.id FROM tenants t
		LEFT JOIN register_snapshots s ON s.tenant_id = t.id AND s.day = ?
		WHERE t.disabled_at IS NULL AND (s.taken_at IS NULL OR s.stale_from IS NULL
			OR EXISTS (SELECT 1 FROM audit_log a WHERE a.tenant_id = t.id AND a.id >= s.stale_from))
		ORDER BY CASE WHEN s.taken_at IS NULL THEN 0 ELSE 1 END, s.taken_at, t.id LIMIT ?`, day, limit).Scan(&ids).Error
	if err != nil {
		return nil, fmt.Errorf("tenants to snapshot: %w", err)
	}
	return ids, nil
}

type countRow struct {
	Status         string
	Treatment      *string
	RiskScore      *int
	N              int
	Outside        int
	ReviewsOverdue int
}

// Count implements SnapshotStore: one read of the tenant's risks, grouped, and one
// of its open actions.
func (s *Store) Count(ctx context.Context, tenantID, today string) (Counts, error) {
	var rows []countRow
	err := s.tenant(ctx, tenantID).Table("risks").Scopes(database.Published(tenantID, "import_id")).Select(`status, treatment, risk_score, COUNT(*) AS n,
		SUM(CASE WHEN risk_score IS NOT NULL AND `+riskstore.OutsideAppetiteSQL+` THEN 1 ELSE 0 END) AS outside,
		SUM(CASE WHEN review_date < ? AND status <> 'closed' THEN 1 ELSE 0 END) AS reviews_overdue`, today).
		Group("status, treatment, risk_score").Scan(&rows).Error
	if err != nil {
		return Counts{}, fmt.Errorf("count register: %w", err)
	}
	c := Counts{ByStatus: map[string]int{}, ByTreatment: map[string]int{"none": 0}, ByBand: map[string]int{"unscored": 0}}
	for _, st := range risks.Statuses {
		c.ByStatus[string(st)] = 0
	}
	for _, t := range risks.Treatments {
		c.ByTreatment[string(t)] = 0
	}
	for _, b := range Bands {
		c.ByBand[b.Name] = 0
	}
	for _, r := range rows {
		c.Total += r.N
		c.ByStatus[r.Status] += r.N
		t := "none"
		if r.Treatment != nil {
			t = *r.Treatment
		}
		c.ByTreatment[t] += r.N
		c.ByBand[BandOf(r.RiskScore)] += r.N
		c.OutsideAppetite += r.Outside
		c.ReviewsOverdue += r.ReviewsOverdue
	}
	var actions int64
	if err := s.tenant(ctx, tenantID).Table("risk_actions").Where("status = 'open' AND due_date < ?", today).
		Count(&actions).Error; err != nil {
		return Counts{}, fmt.Errorf("count overdue actions: %w", err)
	}
	c.ActionsOverdue = int(actions)
	return c, nil
}

// Put implements SnapshotStore: an upsert on (tenant, day), so that however many
// instances take a day's snapshot, there is one.
func (s *Store) Put(ctx context.Context, tenantID, day string, c Counts, at, staleFrom time.Time) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	err = database.Conn(ctx, s.db).Exec(`INSERT INTO register_snapshots (tenant_id, day, counts, taken_at, stale_from) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (tenant_id, day) DO UPDATE SET counts = excluded.counts, taken_at = excluded.taken_at, stale_from = excluded.stale_from
		WHERE register_snapshots.taken_at <= excluded.taken_at`, tenantID, day, string(b), at.UTC(), ids.Before(ids.Audit, staleFrom)).Error
	if err != nil {
		return fmt.Errorf("put register snapshot: %w", err)
	}
	return nil
}

// Snapshots returns the tenant's snapshots of days [from, to], by day.
func (s *Store) Snapshots(ctx context.Context, tenantID, from, to string) ([]Snapshot, error) {
	var rows []snapshotRow
	if err := s.tenant(ctx, tenantID).Where("day >= ? AND day <= ?", from, to).Order("day").
		Limit(maxSnapshotDays).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read register snapshots: %w", err)
	}
	out := make([]Snapshot, len(rows))
	for i, r := range rows {
		out[i] = Snapshot{Day: r.Day, TakenAt: r.TakenAt.UTC()}
		if err := json.Unmarshal([]byte(r.Counts), &out[i].Counts); err != nil {
			return nil, fmt.Errorf("read register snapshot %s: %w", r.Day, err)
		}
	}
	return out, nil
}

// maxSnapshotDays bounds one series' read: MaxSpan's days.
const maxSnapshotDays = 1831
