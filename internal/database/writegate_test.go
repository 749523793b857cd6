package database_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/database"
)

// SQLite's writers queue at the write gate instead of polling in the busy handler:
// with a busy timeout far shorter than the queue's wait, 16 writers mixing
// transactions (which hold the lock across a pause) and autocommit writes all
// succeed. Without the gate most of them fail with SQLITE_BUSY.
func TestSQLiteWritersQueueInsteadOfFailingBusy(t *testing.T) {
	ctx := context.Background()
	db, err := database.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "gate.db"),
		database.Options{BusyTimeout: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Exec("CREATE TABLE notes (id TEXT PRIMARY KEY)").Error; err != nil {
		t.Fatal(err)
	}
	type note struct{ ID string }
	const writers, each = 16, 8
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := fmt.Sprintf("%d-%d", w, i)
				if i%2 == 0 {
					errs <- db.Table("notes").Create(&note{ID: id}).Error
					continue
				}
				errs <- database.RunInTx(ctx, db.DB, func(ctx context.Context) error {
					if err := database.Conn(ctx, db.DB).Table("notes").Create(&note{ID: id}).Error; err != nil {
						return err
					}
					time.Sleep(3 * time.Millisecond) // hold the write lock, as a handler does
					return nil
				})
			}
		}()
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if err != nil {
			failed++
			t.Log(err)
		}
	}
	var n int64
	db.Table("notes").Count(&n)
	if failed > 0 || n != writers*each {
		t.Fatalf("%d of %d writes failed, %d stored; want all stored", failed, writers*each, n)
	}
}
