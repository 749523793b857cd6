// Package duestore finds due items and claims due-date notices with GORM on SQLite
// or PostgreSQL (internal/due).
package duestore

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/due"
)

// Store implements due.Store, and records notices through its changes.Point.
type Store struct {
	db    *gorm.DB
	point changes.Point
}

var _ due.Store = (*Store)(nil)

// New returns a Store over db whose notices record through rec (required).
func New(db *gorm.DB, rec changes.Recorder) *Store {
	return &Store{db: db, point: changes.Point{Tx: database.NewRunner(db), Recorder: rec}}
}

// InTx runs fn in the transaction ctx carries, or a new one.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	return database.RunInTx(ctx, s.db, fn)
}

// Find implements due.Store. The window function keeps each tenant to perTenant
// items of the batch; the partial indexes of migration 0021 serve the date range.
// A timestamp source's range is on the column itself, so its index serves it too
// (idx_api_keys_expires_at): [from 00:00 UTC, the day after to 00:00 UTC).
func (s *Store) Find(ctx context.Context, kind changes.Action, src due.Source, from, to string, limit, perTenant int) ([]due.Item, error) {
	col := "t." + src.DateColumn
	where, args, err := dateRange(col, src.Timestamp, from, to)
	if err != nil {
		return nil, err
	}
	if src.Timestamp {
		col = s.utcDay(col)
	}
	if src.Where != "" {
		where += " AND (" + src.Where + ")"
	}
	if src.Marked && database.AnyImportPending() {
		// A pending import's rows come due once it is published (migration 0031).
		where += " AND " + database.PublishedSQL("t.import_id")
	}
	q := `SELECT id, tenant_id, due_date FROM (
		SELECT t.id, t.tenant_id, ` + col + ` AS due_date,
			ROW_NUMBER() OVER (PARTITION BY t.tenant_id ORDER BY ` + col + `, t.id) AS rn
		FROM ` + src.Table + ` t
		WHERE ` + where + `
		AND NOT EXISTS (SELECT 1 FROM due_notices n WHERE n.kind = ? AND n.object_id = t.id AND n.due_date = ` + col + `)
	) d WHERE rn <= ? ORDER BY due_date, id LIMIT ?`
	args = append(args, string(kind), perTenant, limit)
	var rows []struct {
		ID       string
		TenantID string
		DueDate  string
	}
	if err := database.Conn(ctx, s.db).Raw(q, args...).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("find due %s: %w", kind, err)
	}
	out := make([]due.Item, len(rows))
	for i, r := range rows {
		out[i] = due.Item{TenantID: r.TenantID, ObjectID: r.ID, DueDate: r.DueDate}
	}
	return out, nil
}

// dateRange is the condition that col falls in [from, to] (from "" for no lower
// bound), and its arguments.
func dateRange(col string, timestamp bool, from, to string) (string, []any, error) {
	if !timestamp {
		if from == "" {
			return col + " <= ? AND " + col + " IS NOT NULL", []any{to}, nil
		}
		return col + " <= ? AND " + col + " >= ?", []any{to, from}, nil
	}
	end, err := time.Parse(due.DateLayout, to)
	if err != nil {
		return "", nil, fmt.Errorf("find due: window end %q: %w", to, err)
	}
	where, args := col+" < ?", []any{end.AddDate(0, 0, 1)}
	if from != "" {
		start, err := time.Parse(due.DateLayout, from)
		if err != nil {
			return "", nil, fmt.Errorf("find due: window start %q: %w", from, err)
		}
		where, args = where+" AND "+col+" >= ?", append(args, start)
	}
	return where, args, nil
}

// utcDay is the SQL of timestamp column col's UTC day, YYYY-MM-DD, in the store's
// dialect: what a due_notices row's due_date holds for it.
func (s *Store) utcDay(col string) string {
	if s.db.Dialector.Name() == string(database.Postgres) {
		return "to_char(" + col + " AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
	}
	// SQLite's date() reads the driver's "YYYY-MM-DD HH:MM:SS.fff+00:00" and
	// answers the UTC day.
	return "date(" + col + ")"
}

// claimSQL inserts a notice unless one of the same ID or (kind, object, due date)
// exists: another run's committed claim, or one in flight, which it waits for.
const claimSQL = `INSERT INTO due_notices (id, tenant_id, kind, object_id, due_date, created_at)
	VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`

// Claim implements due.Store.
func (s *Store) Claim(ctx context.Context, id string, kind changes.Action, it due.Item, now time.Time) (bool, error) {
	res := database.Conn(ctx, s.db).Exec(claimSQL, id, it.TenantID, string(kind), it.ObjectID, it.DueDate, now)
	if res.Error != nil {
		return false, fmt.Errorf("claim notice %s: %w", id, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// Record records c (a notice: its After is the object as found, its EventID the
// notice's) in the transaction ctx carries.
func (s *Store) Record(ctx context.Context, c changes.Change) error {
	return s.point.Write(ctx, func(context.Context) (changes.Change, error) { return c, nil })
}

// DeleteBefore deletes up to limit notices whose due date is before cutoff's UTC
// day (sweep.ByAge; the cutoff is RetentionDays and a day back, so no kind's window
// reaches them) through idx_due_notices_due_date, and returns how many.
func (s *Store) DeleteBefore(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	conn := database.Conn(ctx, s.db)
	sub := conn.Session(&gorm.Session{NewDB: true}).Table("due_notices").Select("id").
		Where("due_date < ?", cutoff.UTC().Format(due.DateLayout)).Order("due_date").Limit(limit)
	res := conn.Table("due_notices").Where("id IN (?)", sub).Delete(map[string]any{})
	if res.Error != nil {
		return 0, fmt.Errorf("sweep due notices: %w", res.Error)
	}
	return int(res.RowsAffected), nil
}
