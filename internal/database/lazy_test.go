package database_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
)

// TestLazyUnitOfWorkIsOneStatement: a unit of work RunInTx opens on PostgreSQL sends
// what it held (Defer, ExecLast) as one autocommit statement when nothing else
// needed its transaction; a statement that does need it (a read) begins it and finds
// the rows held before it already written; a failing unit of work, or a failing
// held statement, leaves no row. On SQLite the same calls run at once in a
// transaction, with the same rows committed or not.
func TestLazyUnitOfWorkIsOneStatement(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	ctx := context.Background()
	if err := db.Exec("CREATE TABLE lazy_t (id VARCHAR(10) PRIMARY KEY)").Error; err != nil {
		t.Fatal(err)
	}
	pg := dbtest.Postgres()
	if pg {
		// Each row notes the statement and the transaction that wrote it.
		for _, s := range []string{
			"CREATE TABLE lazy_log (id VARCHAR(10), q TEXT, xid TEXT)",
			`CREATE FUNCTION lazy_note() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
				INSERT INTO lazy_log VALUES (NEW.id, current_query(), pg_current_xact_id()::text);
				RETURN NEW; END $$`,
			"CREATE TRIGGER lazy_note AFTER INSERT ON lazy_t FOR EACH ROW EXECUTE FUNCTION lazy_note()",
		} {
			if err := db.Exec(s).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
	const ins = "INSERT INTO lazy_t (id) VALUES (?)"
	failed := errors.New("the unit of work fails")

	// A: deferred, last: one statement, no transaction of its own.
	var lastRows int64 = -1
	err := database.RunInTx(ctx, db.DB, func(ctx context.Context) error {
		if err := database.Defer(ctx, db.DB, ins, "a1"); err != nil {
			return err
		}
		if err := database.Defer(ctx, db.DB, ins, "a2"); err != nil {
			return err
		}
		return database.ExecLast(ctx, db.DB, func(n int64) { lastRows = n }, ins, "a3")
	})
	if err != nil {
		t.Fatal(err)
	}
	if lastRows != 1 {
		t.Errorf("ExecLast reported %d rows, want 1", lastRows)
	}

	// B: a read begins the transaction and sees the held row; the rest follows in it.
	var seen int64 = -1
	err = database.RunInTx(ctx, db.DB, func(ctx context.Context) error {
		if err := database.Defer(ctx, db.DB, ins, "b1"); err != nil {
			return err
		}
		if err := database.Conn(ctx, db.DB).Raw("SELECT count(*) FROM lazy_t WHERE id = ?", "b1").Scan(&seen).Error; err != nil {
			return err
		}
		if err := database.Defer(ctx, db.DB, ins, "b2"); err != nil {
			return err
		}
		return database.ExecLast(ctx, db.DB, func(int64) {}, ins, "b3")
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != 1 {
		t.Errorf("a read after Defer saw %d held rows, want 1", seen)
	}

	// C: the unit of work fails after holding: nothing is written (on PostgreSQL
	// nothing is sent, and done never runs).
	called := false
	err = database.RunInTx(ctx, db.DB, func(ctx context.Context) error {
		if err := database.Defer(ctx, db.DB, ins, "c1"); err != nil {
			return err
		}
		if err := database.ExecLast(ctx, db.DB, func(int64) { called = true }, ins, "c2"); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("failing unit of work: %v", err)
	}
	if called && pg { // SQLite runs it at once, in the transaction that then rolls back
		t.Error("ExecLast's done ran for a unit of work that failed, its statement held")
	}

	// D: a held statement that fails (a duplicate key) fails the unit as a whole.
	err = database.RunInTx(ctx, db.DB, func(ctx context.Context) error {
		if err := database.Defer(ctx, db.DB, ins, "d1"); err != nil {
			return err
		}
		return database.ExecLast(ctx, db.DB, func(int64) {}, ins, "a1")
	})
	if err == nil {
		t.Error("a unit of work whose statement repeats a key succeeded")
	}

	var ids []string
	if err := db.Raw("SELECT id FROM lazy_t ORDER BY id").Scan(&ids).Error; err != nil {
		t.Fatal(err)
	}
	if want := []string{"a1", "a2", "a3", "b1", "b2", "b3"}; !slices.Equal(ids, want) {
		t.Errorf("rows %v, want %v", ids, want)
	}
	if !pg {
		return
	}
	type note struct{ ID, Q, Xid string }
	var notes []note
	if err := db.Raw("SELECT id, q, xid FROM lazy_log ORDER BY id").Scan(&notes).Error; err != nil {
		t.Fatal(err)
	}
	byID := map[string]note{}
	for _, n := range notes {
		byID[n.ID] = n
	}
	a := byID["a1"]
	if !strings.Contains(a.Q, "carried1 AS") || byID["a2"].Q != a.Q || byID["a3"].Q != a.Q {
		t.Errorf("unit A was not one statement: %+v", notes[:3])
	}
	if b := byID["b1"]; b.Xid != byID["b2"].Xid || b.Xid != byID["b3"].Xid || strings.Contains(b.Q, "carried") {
		t.Errorf("unit B's rows were not written in one transaction, the held one on its own first: %+v", notes[3:])
	}
}
