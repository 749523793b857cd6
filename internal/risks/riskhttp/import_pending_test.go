package riskhttp_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/database"
)

// view is what a tenant's reads show: its risks listed and found by a word of
// theirs, on its heat map, and its events and audit entries (first pages of 100).
type view struct{ listed, matched, mapped, events, entries int }

func viewOf(env *apitest.Env, key string) view {
	env.T.Helper()
	page := func(path string) int {
		var p struct{ Data []struct{} }
		env.Do(apitest.Request{Method: http.MethodGet, Path: path, Bearer: key}).Expect(http.StatusOK).Decode(&p)
		return len(p.Data)
	}
	var h struct {
		Cells      []struct{ Count int }
		Unassessed int
	}
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/heatmap", Bearer: key}).Expect(http.StatusOK).Decode(&h)
	v := view{listed: page("/v2/risks?limit=100"), matched: page("/v2/risks?limit=100&q=chunkword"), mapped: h.Unassessed,
		events: page("/v2/events?limit=100"), entries: page("/v2/audit-log?limit=100")}
	for _, c := range h.Cells {
		v.mapped += c.Count
	}
	return v
}

// TestImportLetsOthersWriteMeanwhile (SQLite): while tenant A's keyed import of
// 3,000 new risks (1,500 under -short) is being written, 500 a transaction, tenant B's create
// completes and A's own list, search, heat map, events and audit log show none of
// the import; after its answer they show all of it. On PostgreSQL the import is
// one transaction that holds no lock B's create needs (BenchmarkImportFairness).
func TestImportLetsOthersWriteMeanwhile(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	if env.App.DB.Dialect == database.Postgres {
		t.Skip("PostgreSQL imports in one transaction")
	}
	a, b := env.Tenant("Acme"), env.Tenant("Beta")
	before := viewOf(env, a.Key)
	n := 3000
	if testing.Short() {
		n = 1500 // three transactions: enough for B's create and A's reads between them
	}
	var file strings.Builder
	file.WriteString("externalId,title,likelihood,impact\n")
	for i := range n {
		fmt.Fprintf(&file, "C-%d,chunkword risk %d,%d,%d\n", i, i, 1+i%5, 1+i/5%5)
	}
	done := make(chan *apitest.Response, 1)
	go func() {
		done <- importFile(env, a.Key, "", file.String(), http.Header{"Idempotency-Key": {"import-chunks"}})
	}()
	for {
		var marked int64
		if err := env.App.DB.DB.Raw(`SELECT COUNT(*) FROM risks WHERE tenant_id = ? AND import_id IS NOT NULL`, a.ID).
			Scan(&marked).Error; err != nil {
			t.Fatal(err)
		}
		if marked > 0 {
			break
		}
		select {
		case res := <-done:
			t.Fatalf("the import answered %d before any of its rows was committed", res.Code)
		case <-time.After(5 * time.Millisecond): // not a busy loop beside the import
		}
	}
	create(env, b.Key, map[string]any{"title": "B's own"})
	during := viewOf(env, a.Key)
	select {
	case res := <-done:
		t.Fatalf("the import answered %d before B's create and A's reads were done: make it larger", res.Code)
	default:
	}
	if during != before {
		t.Errorf("A's reads during its import %+v, want as before %+v", during, before)
	}
	var rep report
	(<-done).Expect(http.StatusCreated).Decode(&rep)
	if rep.Created != n {
		t.Errorf("import %+v, want %d created", rep, n)
	}
	after := viewOf(env, a.Key)
	if want := (view{listed: 100, matched: 100, mapped: n, events: 100, entries: 100}); after != want {
		t.Errorf("A's reads after its import %+v, want %+v", after, want)
	}
}
