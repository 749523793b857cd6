package apitest

import (
	"fmt"
	"testing"

	"github.com/riskapi/riskapi/internal/database"
)

// FailCompleting makes the commit of the idempotency record with key k fail, after
// the handler's writes — and its event — went into the transaction: the whole
// unit of work must roll back. Call undo before the next write with key k.
func FailCompleting(t testing.TB, db *database.DB, k string) (undo func()) {
	t.Helper()
	var stmts, drops []string
	if db.Dialect == database.Postgres {
		stmts = []string{
			`CREATE FUNCTION riskapi_test_fail() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'injected'; END $$ LANGUAGE plpgsql`,
			fmt.Sprintf(`CREATE TRIGGER riskapi_test_fail BEFORE INSERT OR UPDATE ON idempotency_records FOR EACH ROW
				WHEN (NEW.idem_key = '%s' AND NEW.state = 'complete') EXECUTE FUNCTION riskapi_test_fail()`, k),
		}
		drops = []string{`DROP TRIGGER riskapi_test_fail ON idempotency_records`, `DROP FUNCTION riskapi_test_fail()`}
	} else {
		stmts = []string{fmt.Sprintf(`CREATE TRIGGER riskapi_test_fail BEFORE INSERT ON idempotency_records
			WHEN NEW.idem_key = '%s' AND NEW.state = 'complete' BEGIN SELECT RAISE(ABORT, 'injected'); END`, k)}
		drops = []string{`DROP TRIGGER riskapi_test_fail`}
	}
	for _, s := range stmts {
		if err := db.Exec(s).Error; err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		for _, s := range drops {
			if err := db.Exec(s).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
}
