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

type tenantRow struct {
	RiskAppetite    *int
	AppetiteVersion int64
}

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

// Get returns the tenant's appetite, read in the transaction ctx carries if any.
// Errors: tenants.ErrTenantNotFound.
func (s *Store) Get(ctx context.Context, tenantID string) (Appetite, error) {
	return s.get(ctx, tenantID, false)
}

func (s *Store) get(ctx context.Context, tenantID string, lock bool) (Appetite, error) {
	conn := database.Conn(ctx, s.db)
	var t []tenantRow
	q := conn.Table("tenants").Select("risk_appetite, appetite_version").Where("id = ?", tenantID)
	if lock && s.db.Dialector.Name() == string(database.Postgres) {
		q = q.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate})
	}
	if err := q.Find(&t).Error; err != nil {
		return Appetite{}, fmt.Errorf("read appetite: %w", err)
	}
	if len(t) == 0 {
		return Appetite{}, tenants.ErrTenantNotFound
	}
	var cats []categoryRow
	if err := conn.Scopes(database.OfTenant(tenantID)).Find(&cats).Error; err != nil {
		return Appetite{}, fmt.Errorf("read category appetites: %w", err)
	}
	a := Appetite{Overall: t[0].RiskAppetite, Version: t[0].AppetiteVersion, Categories: map[string]int{}}
	for _, c := range cats {
		a.Categories[c.Category] = c.Appetite
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
