package database_test

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/netfault"
)

// proxiedDB opens a fresh PostgreSQL database reached through a fault proxy, with a
// table outcome_notes to write to.
func proxiedDB(t *testing.T) (*database.DB, *netfault.Proxy) {
	t.Helper()
	if !dbtest.Postgres() {
		t.Skip("a lost answer needs a connection: PostgreSQL (SQLite commits in-process)")
	}
	u, err := url.Parse(dbtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	px := netfault.StartT(t, u.Host)
	u.Host = px.Addr()
	db, err := database.Open(context.Background(), u.String(), database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Exec("CREATE TABLE outcome_notes (id TEXT PRIMARY KEY)").Error; err != nil {
		t.Fatal(err)
	}
	return db, px
}

// TestLostCommitAnswerIsUnknown: the COMMIT of a transaction reaches PostgreSQL and
// its answer is lost. The row is committed; the error must be marked
// ErrOutcomeUnknown, whatever pgx says about retrying (it reports the connection it
// closed on the lost answer as "conn closed", safe to retry: issue 25, item 1). Cut
// before the COMMIT was sent, the same write is not marked: nothing committed.
func TestLostCommitAnswerIsUnknown(t *testing.T) {
	t.Parallel()
	db, px := proxiedDB(t)
	write := func(id string) error {
		ctx := database.WithCallTimeout(context.Background(), 5*time.Second)
		return database.RunInTx(ctx, db.DB, func(ctx context.Context) error {
			return database.Conn(ctx, db.DB).Exec("INSERT INTO outcome_notes (id) VALUES (?)", id).Error
		})
	}
	px.CutAfter(netfault.SimpleQuery("commit"))
	err := write("answer-lost")
	px.Restore()
	t.Logf("lost answer: %v", err)
	if !errors.Is(err, database.ErrUnavailable) || !errors.Is(err, database.ErrOutcomeUnknown) {
		t.Errorf("COMMIT sent, answer lost: %v; want ErrUnavailable and ErrOutcomeUnknown", err)
	}
	px.CutAfter([]byte("before-commit"))
	err = write("before-commit")
	px.Restore()
	if !errors.Is(err, database.ErrUnavailable) || errors.Is(err, database.ErrOutcomeUnknown) {
		t.Errorf("cut before COMMIT: %v; want ErrUnavailable without ErrOutcomeUnknown", err)
	}
	var ids []string
	for range 40 { // the pool may hand out a connection the cuts broke first
		if err = db.Table("outcome_notes").Order("id").Pluck("id", &ids).Error; err == nil {
			break
		}
	}
	if err != nil || len(ids) != 1 || ids[0] != "answer-lost" {
		t.Errorf("rows %v (%v), want only the write whose COMMIT was sent", ids, err)
	}
}

// TestLostAnswerOfOneStatementIsUnknown: a unit of work that goes out as one
// autocommit statement (an unkeyed create: Defer, ExecLast) and whose answer is lost
// is marked ErrOutcomeUnknown, as a lost COMMIT is: the statement committed both rows.
func TestLostAnswerOfOneStatementIsUnknown(t *testing.T) {
	t.Parallel()
	db, px := proxiedDB(t)
	const ins = "INSERT INTO outcome_notes (id) VALUES (?)"
	ctx := database.WithCallTimeout(context.Background(), 5*time.Second)
	px.CutAfter([]byte("one-statement"))
	err := database.RunInTx(ctx, db.DB, func(ctx context.Context) error {
		if err := database.Defer(ctx, db.DB, ins, "one-statement-a"); err != nil {
			return err
		}
		return database.ExecLast(ctx, db.DB, func(int64) {}, ins, "one-statement-b")
	})
	px.Restore()
	if !errors.Is(err, database.ErrUnavailable) || !errors.Is(err, database.ErrOutcomeUnknown) {
		t.Errorf("the one statement sent, its answer lost: %v; want ErrUnavailable and ErrOutcomeUnknown", err)
	}
	if px.PatternCuts() != 1 {
		t.Fatalf("the proxy cut %d connections, want 1 (the unit of work was not one statement)", px.PatternCuts())
	}
	var ids []string
	for range 40 { // the pool may hand out a connection the cut broke first
		if err = db.Table("outcome_notes").Order("id").Pluck("id", &ids).Error; err == nil {
			break
		}
	}
	if err != nil || !slices.Equal(ids, []string{"one-statement-a", "one-statement-b"}) {
		t.Errorf("rows %v (%v), want both rows of the statement that was sent", ids, err)
	}
}
