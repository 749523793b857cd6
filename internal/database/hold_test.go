package database_test

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
)

// Holds: of 16 goroutines trying one name at once, exactly one holds it; a second
// instance on the same PostgreSQL (its own pool and process record) is refused while
// it is held — also past idle_in_transaction_session_timeout, which the holder's
// beat keeps from ending it — and takes it once it is released. On SQLite, one
// process per file, the process's record is the lock.
func TestHoldsOneHolderAtATime(t *testing.T) {
	ctx := context.Background()
	url := "sqlite://" + filepath.Join(t.TempDir(), "holds.db")
	if dbtest.Postgres() {
		url = dbtest.URL(t)
	}
	opts := database.Options{IdleInTxTimeout: 300 * time.Millisecond}
	one, err := database.Open(ctx, url, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	here := database.NewHolds(one.DB)

	var held atomic.Int32
	var release func()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, ok, err := here.TryHold(ctx, "import", "tenant-a")
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				held.Add(1)
				mu.Lock()
				release = r
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if held.Load() != 1 {
		t.Fatalf("%d goroutines hold the name, want 1", held.Load())
	}
	if r, ok, err := here.TryHold(ctx, "import", "tenant-b"); err != nil || !ok {
		t.Fatalf("another name: held %v, %v; want it free", ok, err)
	} else {
		r()
	}

	if !dbtest.Postgres() {
		release()
		if r, ok, _ := here.TryHold(ctx, "import", "tenant-a"); !ok {
			t.Fatal("released name not free")
		} else {
			r()
		}
		return
	}
	two, err := database.Open(ctx, url, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer two.Close()
	there := database.NewHolds(two.DB)
	time.Sleep(1500 * time.Millisecond) // five idle timeouts: the beat keeps it
	if _, ok, err := there.TryHold(ctx, "import", "tenant-a"); err != nil || ok {
		t.Fatalf("second instance: held %v, %v; want refused while the first holds it", ok, err)
	}
	release()
	r, ok, err := there.TryHold(ctx, "import", "tenant-a")
	if err != nil || !ok {
		t.Fatalf("second instance after release: held %v, %v; want it", ok, err)
	}
	r()
}
