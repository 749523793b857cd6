package appetite

import (
	"context"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/tenants"
)

// Store keeps appetites: the overall one and its version on tenants, the
// categories' in category_appetites (migration 0026). Set records
// tenant.appetite_changed through its changes.Point.
type Store struct {
	db    *gorm.DB
	point changes.Point
}

// NewStore returns a Store over db whose changes record through rec.
func NewStore(db *gorm.DB, rec changes.Recorder) *Store {
	return &Store{db: db, point: changes.Point{Tx: database.NewRunner(db), Recorder: rec}}
}

type categoryRow struct {
	TenantID string
	Category string
	Appetite int
}

func (categoryRow) TableName() string { return "category_appetites" }

// View is an appetite as its recorded changes show it (tenant.appetite_changed).
type View struct {
	RiskAppetite     *int           `json:"riskAppetite"`
	CategoryAppetite map[string]int `json:"categoryAppetite"`
}

// Resource implements changes.View.
func (View) Resource() string { return "tenant" }

// ViewOf returns a as the API shows it.
func ViewOf(a Appetite) View {
	c := a.Categories
	if c == nil {
		c = map[string]int{}
	}
	return View{RiskAppetite: a.Overall, CategoryAppetite: c}
}

// Get returns the tenant's appetite, read in the transaction ctx carries if one has
// begun (database.ReadConn).
// Errors: tenants.ErrTenantNotFound.
func (s *Store) Get(ctx context.Context, tenantID string) (Appetite, error) {
	return s.get(ctx, tenantID, false)
}

func (s *Store) get(ctx context.Context, tenantID string, lock bool) (Appetite, error) {
	// A risk write's read (Recorder) sees what a read in its transaction would under
	// READ COMMITTED, and leaves an unkeyed create's unit of work unbegun: one
	// statement with its held INSERTs (docs/idempotency.md).
	conn := database.ReadConn(ctx, s.db)
	if lock {
		conn = database.Conn(ctx, s.db)
	}
	if lock && s.db.Dialector.Name() == string(database.Postgres) {
		// The writer's lock on the tenant's row, before the read below.
		var v []int64
		if err := conn.Table("tenants").Select("appetite_version").Where("id = ?", tenantID).
			Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate}).Find(&v).Error; err != nil {
			return Appetite{}, fmt.Errorf("lock appetite: %w", err)
		}
	}
	// One statement: every scored risk write reads the appetite (Recorder), so the
	// tenant's row and its categories come in one round trip.
	var rows []struct {
		RiskAppetite    *int
		AppetiteVersion int64
		Category        *string
		Appetite        *int
	}
	if err := conn.Raw(`SELECT t.risk_appetite, t.appetite_version, c.category, c.appetite
		FROM tenants t LEFT JOIN category_appetites c ON c.tenant_id = t.id
		WHERE t.id = ?`, tenantID).Scan(&rows).Error; err != nil {
		return Appetite{}, fmt.Errorf("read appetite: %w", err)
	}
	if len(rows) == 0 {
		return Appetite{}, tenants.ErrTenantNotFound
	}
	a := Appetite{Overall: rows[0].RiskAppetite, Version: rows[0].AppetiteVersion, Categories: map[string]int{}}
	for _, r := range rows {
		if r.Category != nil && r.Appetite != nil {
			a.Categories[*r.Category] = *r.Appetite
		}
	}
	return a, nil
}

// Set applies p to the tenant's appetite over the version ifMatch accepts, records
// tenant.appetite_changed, and returns the appetite as stored. A patch that
// changes nothing leaves the version and records nothing. Errors: tenants.ErrTenantNotFound,
// *ErrVersionChanged, VALIDATION_FAILED.
func (s *Store) Set(ctx context.Context, tenantID string, ifMatch IfMatch, p Patch) (Appetite, error) {
	if err := p.Validate(); err != nil {
		return Appetite{}, err
	}
	var out Appetite
	err := database.NewRunner(s.db).InTx(ctx, func(ctx context.Context) error {
		// The tenant's row lock (PostgreSQL) or the write lock (SQLite, taken by the
		// first write): two admins' changes take turns, and the second sees the first.
		if s.db.Dialector.Name() != string(database.Postgres) {
			if err := database.Conn(ctx, s.db).Exec("UPDATE tenants SET appetite_version = appetite_version WHERE id = ?", tenantID).Error; err != nil {
				return fmt.Errorf("lock tenant: %w", err)
			}
		}
		before, err := s.get(ctx, tenantID, true)
		if err != nil {
			return err
		}
		if ifMatch != nil && !ifMatch(before.Version) {
			return &ErrVersionChanged{Current: before}
		}
		after, err := before.Apply(p)
		if err != nil {
			return err
		}
		out = before
		if after.Same(before) {
			return nil
		}
		after.Version = before.Version + 1
		out = after
		return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
			return changes.Change{TenantID: tenantID, Action: changes.TenantAppetiteChanged,
				Target: changes.Target{ID: tenantID}, Before: ViewOf(before), After: ViewOf(after)}, s.write(ctx, tenantID, after)
		})
	})
	return out, err
}

// write stores a over what the tenant had.
func (s *Store) write(ctx context.Context, tenantID string, a Appetite) error {
	conn := database.Conn(ctx, s.db)
	if err := conn.Exec("UPDATE tenants SET risk_appetite = ?, appetite_version = ? WHERE id = ?",
		a.Overall, a.Version, tenantID).Error; err != nil {
		return fmt.Errorf("write appetite: %w", err)
	}
	if err := conn.Scopes(database.OfTenant(tenantID)).Delete(&categoryRow{}).Error; err != nil {
		return fmt.Errorf("write category appetites: %w", err)
	}
	rows := make([]categoryRow, 0, len(a.Categories))
	for k, v := range a.Categories {
		rows = append(rows, categoryRow{TenantID: tenantID, Category: k, Appetite: v})
	}
	if len(rows) > 0 {
		if err := conn.Create(&rows).Error; err != nil {
			return fmt.Errorf("write category appetites: %w", err)
		}
	}
	return nil
}
