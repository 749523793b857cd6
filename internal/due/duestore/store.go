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
func (s *Store) Find(ctx context.Context, kind changes.Action, src due.Source, from, to string, limit, perTenant int) ([]due.Item, error) {
	col := "t." + src.DateColumn
	where := col + " <= ?"
	args := []any{to}
	if from != "" {
		where += " AND " + col + " >= ?"
		args = append(args, from)
	} else {
		where += " AND " + col + " IS NOT NULL"
	}
	if src.Where != "" {
		where += " AND (" + src.Where + ")"
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
