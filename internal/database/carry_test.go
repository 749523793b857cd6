package database_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
)

// TestDeferredStatementsRunOnceInTheirUnitOfWork: on both stores, an INSERT handed
// to Defer commits with its unit of work exactly once — carried by the next
// ExecCarrying statement (its own WITH or none), or sent when the unit of work
// ends — and rolls back with it; ExecCarrying's RowsAffected stays its own.
func TestDeferredStatementsRunOnceInTheirUnitOfWork(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	ctx := context.Background()
	if err := db.Exec("CREATE TABLE carry_t (id VARCHAR(10) PRIMARY KEY)").Error; err != nil {
		t.Fatal(err)
	}
	const ins = "INSERT INTO carry_t (id) VALUES (?)"
	err := database.RunInTx(ctx, db.DB, func(ctx context.Context) error {
		for _, id := range []string{"a1", "a2"} {
			if err := database.Defer(ctx, db.DB, ins, id); err != nil {
				return err
			}
		}
		if res := database.ExecCarrying(ctx, db.DB, ins, "b"); res.Error != nil || res.RowsAffected != 1 {
			t.Errorf("carrying insert: %v, %d rows", res.Error, res.RowsAffected)
		}
		if err := database.Defer(ctx, db.DB, ins, "c"); err != nil {
			return err
		}
		res := database.ExecCarrying(ctx, db.DB, "WITH x AS (SELECT 1 AS n) INSERT INTO carry_t (id) SELECT ? FROM x", "d")
		if res.Error != nil || res.RowsAffected != 1 {
			t.Errorf("carrying insert with its own WITH: %v, %d rows", res.Error, res.RowsAffected)
		}
		return database.Defer(ctx, db.DB, ins, "e") // carried by nothing: sent at the end
	})
	if err != nil {
		t.Fatal(err)
	}
	failed := errors.New("the unit of work fails")
	err = database.RunInTx(ctx, db.DB, func(ctx context.Context) error {
		if err := database.Defer(ctx, db.DB, ins, "never1"); err != nil {
			return err
		}
		if err := database.ExecCarrying(ctx, db.DB, ins, "never2").Error; err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("failing unit of work: %v", err)
	}
	if dbtest.Postgres() {
		// Deferred, not sent: a duplicate key surfaces at the statement carrying it.
		_ = database.RunInTx(ctx, db.DB, func(ctx context.Context) error {
			if err := database.Defer(ctx, db.DB, ins, "a1"); err != nil {
				t.Errorf("Defer sent its statement at once on PostgreSQL: %v", err)
			}
			if err := database.ExecCarrying(ctx, db.DB, ins, "z").Error; err == nil {
				t.Error("the carried duplicate did not fail the carrying statement")
			}
			return failed
		})
	}
	var ids []string
	if err := db.Raw("SELECT id FROM carry_t ORDER BY id").Scan(&ids).Error; err != nil {
		t.Fatal(err)
	}
	if want := []string{"a1", "a2", "b", "c", "d", "e"}; !slices.Equal(ids, want) {
		t.Errorf("rows %v, want %v", ids, want)
	}
}
