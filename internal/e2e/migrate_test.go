package e2e_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/e2e"
)

// TestMigrateTwiceAtOnce: two `api migrate` processes started together on an empty
// PostgreSQL database — as two instances of a release might — both succeed, and the
// schema is applied exactly once between them; a third finds nothing to do. Under
// .ci/run's PgBouncer run (TEST_PGBOUNCER_URL) this goes through the transaction
// pooler, which keeps no session-level lock (docs/deploying.md).
func TestMigrateTwiceAtOnce(t *testing.T) {
	url := dbtest.EmptyURL(t)
	bin := e2e.Binary(t)
	ctx := context.Background()
	migrate := func() (int, error) {
		out, err := e2e.CLI(ctx, bin, url, t.TempDir(), "migrate")
		if err != nil {
			return 0, err
		}
		var r struct {
			Applied int `json:"applied"`
		}
		err = json.Unmarshal(out, &r)
		return r.Applied, err
	}
	var wg sync.WaitGroup
	applied := make([]int, 2)
	errs := make([]error, 2)
	for i := range applied {
		wg.Add(1)
		go func() { defer wg.Done(); applied[i], errs[i] = migrate() }()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if min(applied[0], applied[1]) != 0 || max(applied[0], applied[1]) == 0 {
		t.Errorf("two migrations at once applied %v; want the schema applied by one of them only", applied)
	}
	if n, err := migrate(); err != nil || n != 0 {
		t.Errorf("a migration of the current schema applied %d (%v), want 0", n, err)
	}
}
