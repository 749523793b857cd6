package database_test

import (
	"context"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
)

// TestHangUpDoesNotCutAWriteShort: a client that hangs up while its write is in
// the database (its request's context cancelled between two statements of one
// transaction) neither aborts the write half-way nor makes it fail: the
// transaction commits whole, and the pool's connection keeps working. Cancelled
// statements cost a PostgreSQL connection each (pgx closes it), which a flood of
// hang-ups — no credential needed — turned into a starved pool and 503s.
func TestHangUpDoesNotCutAWriteShort(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	if err := db.Exec("CREATE TABLE hangup_notes (id TEXT PRIMARY KEY)").Error; err != nil {
		t.Fatal(err)
	}
	client, hangUp := context.WithCancel(context.Background())
	ctx := database.WithCallTimeout(client, 10*time.Second) // as the HTTP server marks a request
	err := database.RunInTx(ctx, db.DB, func(ctx context.Context) error {
		if err := database.Conn(ctx, db.DB).Exec("INSERT INTO hangup_notes (id) VALUES ('first')").Error; err != nil {
			return err
		}
		hangUp()
		return database.Conn(ctx, db.DB).Exec("INSERT INTO hangup_notes (id) VALUES ('second')").Error
	})
	if err != nil {
		t.Fatalf("write whose client hung up: %v, want it committed", err)
	}
	var n int64
	if err := db.Table("hangup_notes").Count(&n).Error; err != nil || n != 2 {
		t.Fatalf("%d rows after the write (%v), want both statements committed", n, err)
	}
}
