package riskhttp_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm/clause"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/database"
)

// TestImportRefusesBadBytes: a NUL byte or bytes that are no UTF-8 in any cell is
// 400 VALIDATION_FAILED naming the row and the column (not a 500 on PostgreSQL,
// not stored on SQLite), and nothing of the file is written.
func TestImportRefusesBadBytes(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	file := "externalId,title,description,owner\n" +
		"B-1,fine,fine,fine\n" +
		"B-2,nul\x00title,fine,fine\n" +
		"B-3,fine,latin1 caf\xe9,fine\n" +
		"B\x00-4,fine,fine,\xff\xfe\n"
	for _, query := range []string{"?dryRun=true", ""} {
		res := importFile(env, a.Key, query, file, nil).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
		var rep report
		res.Decode(&rep)
		var got []string
		for _, e := range rep.Errors {
			got = append(got, fmt.Sprintf("%d %s", e.Row, e.Field))
		}
		if want := "3 title,4 description,5 externalId,5 owner"; strings.Join(got, ",") != want {
			t.Errorf("%q: errors %v, want %s", query, got, want)
		}
	}
	if n := count(t, env, a.Key); n != 0 {
		t.Errorf("%d risks after a refused import, want 0", n)
	}
}

// TestImportErrorsAreBounded: a file of 1,500 bad rows lists the first 1,000 field
// errors, in file order, and its detail counts all 1,500.
func TestImportErrorsAreBounded(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	var b strings.Builder
	b.WriteString("title,likelihood\n")
	for i := range 1500 {
		fmt.Fprintf(&b, "risk %d,9\n", i)
	}
	res := importFile(env, a.Key, "?dryRun=true", b.String(), nil).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	var rep report
	res.Decode(&rep)
	if len(rep.Errors) != 1000 || rep.Errors[0].Row != 2 || rep.Errors[999].Row != 1001 {
		t.Fatalf("%d errors (first row %d), want the first 1000 from row 2", len(rep.Errors), rep.Errors[0].Row)
	}
	detail, _ := res.Map()["detail"].(string)
	if !strings.Contains(detail, "and 1499 more errors") || !strings.Contains(detail, "500 more are left out") {
		t.Errorf("detail %q does not count the 1500 errors", detail)
	}
}

// TestOneImportPerTenant: while one of a tenant's imports runs (held in its writing
// pass by another unit of work holding a risk it updates: the row lock on
// PostgreSQL, the write lock on SQLite), the tenant's next import — a dry run too —
// is 409 IMPORT_IN_PROGRESS with Retry-After, at once; another tenant's dry run is
// not refused; once the first has finished, the tenant imports again.
func TestOneImportPerTenant(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *config.Config) { c.Idempotency.Lease = 20 * time.Second })
	a, b := env.Tenant("Acme"), env.Tenant("Bravo")
	held := importOne(t, env, a, "HELD")
	db := env.App.DB.DB
	locked, release := make(chan error, 1), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- database.RunInTx(context.Background(), db, func(ctx context.Context) error {
			var id string
			err := database.Conn(ctx, db).Table("risks").Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate}).
				Where("id = ?", held).Select("id").Scan(&id).Error
			if err == nil {
				err = database.Conn(ctx, db).Exec("UPDATE risks SET owner = owner WHERE id = ?", held).Error
			}
			locked <- err
			<-release
			return nil
		})
	}()
	if err := <-locked; err != nil {
		t.Fatal(err)
	}
	first := make(chan *apitest.Response, 1)
	startFirst := func() {
		go func() { first <- importFile(env, a.Key, "", "externalId,title\nHELD,renamed\nNEW-1,new\n", nil) }()
	}
	startFirst()
	// The first import has passed its checks once the tenant's lock is taken;
	// retry until the second is refused (the first may not have started yet). A
	// probe may take the lock before the first does, and the first is then refused
	// itself: send it again.
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case r := <-first:
			if r.Code != http.StatusConflict {
				t.Fatalf("the first import ended while its risk was held: %d %s", r.Code, r.Body.String())
			}
			startFirst()
		default:
		}
		res := importFile(env, a.Key, "?dryRun=true", "title\nsecond\n", nil)
		if res.Code == http.StatusConflict {
			res.ExpectProblem(http.StatusConflict, "IMPORT_IN_PROGRESS")
			if res.Header().Get("Retry-After") == "" {
				t.Error("409 IMPORT_IN_PROGRESS without Retry-After")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no 409 while the first import runs: %d %s", res.Code, res.Body.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	importFile(env, a.Key, "", "title\nthird\n", nil).ExpectProblem(http.StatusConflict, "IMPORT_IN_PROGRESS")
	importFile(env, b.Key, "?dryRun=true", "title\nother tenant\n", nil).Expect(http.StatusCreated)
	close(release)
	(<-first).Expect(http.StatusCreated)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	importFile(env, a.Key, "", "title\nafter\n", nil).Expect(http.StatusCreated)
	if n := count(t, env, a.Key); n != 3 {
		t.Errorf("%d risks, want 3 (HELD, NEW-1, after)", n)
	}
}

// TestImportUpdatesByID: an export imported back into its tenant lands on the same
// risks (contract section 13: a row whose id names one of the tenant's risks
// updates it): everything unchanged, then one changed title updates that risk and
// creates nothing; a risk named twice (by id, or by id and externalId) is an error
// on the second row; another tenant's id creates a new risk.
func TestImportUpdatesByID(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.Tenant("Acme"), env.Tenant("Bravo")
	one := create(env, a.Key, map[string]any{"title": "one", "likelihood": 2, "impact": 2})
	create(env, a.Key, map[string]any{"title": "two"})
	exported := exportCSV(t, env, a.Key)
	var rep report
	importFile(env, a.Key, "", csvText(exported), nil).Expect(http.StatusCreated).Decode(&rep)
	if rep.Created != 0 || rep.Updated != 0 || rep.Unchanged != 2 {
		t.Fatalf("export imported back %+v, want 2 unchanged", rep)
	}
	importFile(env, a.Key, "", "id,title\n"+one.ID+",renamed\n", nil).Expect(http.StatusCreated).Decode(&rep)
	if rep.Created != 0 || rep.Updated != 1 {
		t.Fatalf("rename by id %+v, want 1 updated", rep)
	}
	if n := count(t, env, a.Key); n != 2 {
		t.Errorf("%d risks, want 2", n)
	}
	importFile(env, a.Key, "", "id,externalId,title\n"+one.ID+",E-1,x\n"+one.ID+",,y\n", nil).
		ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED").Decode(&rep)
	if len(rep.Errors) != 1 || rep.Errors[0].Row != 3 || rep.Errors[0].Field != "id" {
		t.Errorf("errors %+v, want row 3 id", rep.Errors)
	}
	importFile(env, b.Key, "", "id,title\n"+one.ID+",stolen\n", nil).Expect(http.StatusCreated).Decode(&rep)
	if rep.Created != 1 || rep.Updated != 0 {
		t.Errorf("another tenant's id %+v, want 1 created", rep)
	}
	var got risk
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + one.ID, Bearer: a.Key}).Expect(http.StatusOK).Decode(&got)
	if got.Title != "renamed" {
		t.Errorf("A's risk is %q after B's import, want renamed", got.Title)
	}
}
