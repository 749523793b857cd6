package webhookhttp_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/database"
)

// TestFindingBesideAPendingImport (SQLite): a finding.created whose externalId is a
// row of the tenant's import, written but not yet published, is 409
// IMPORT_IN_PROGRESS with Retry-After, not a 500, and records nothing; its
// redelivery after the import answered updates the imported risk, which stays one.
func TestFindingBesideAPendingImport(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	if env.App.DB.Dialect == database.Postgres {
		t.Skip("PostgreSQL imports in one transaction: nothing is pending")
	}
	a := env.Tenant("Acme")
	s := newSender(t, env, a.ID, "scanner")
	var file strings.Builder
	file.WriteString("externalId,title\n")
	for i := range 1500 { // three transactions of the import: the finding comes between them
		fmt.Fprintf(&file, "C-%d,imported %d\n", i, i)
	}
	body, ct := apitest.Multipart("", apitest.FilePart("file", "risks.csv", "text/csv", file.String()))
	done := make(chan *apitest.Response, 1)
	go func() {
		done <- env.Upload("/v2/risks/import", a.Key, http.Header{"Idempotency-Key": {"import-1"}}, body, ct)
	}()
	for {
		var marked int64
		if err := env.App.DB.DB.Raw(`SELECT COUNT(*) FROM risks WHERE tenant_id = ? AND external_id = 'C-0' AND import_id IS NOT NULL`, a.ID).
			Scan(&marked).Error; err != nil {
			t.Fatal(err)
		}
		if marked > 0 {
			break
		}
		select {
		case res := <-done:
			t.Fatalf("the import answered %d before C-0 was written", res.Code)
		case <-time.After(5 * time.Millisecond):
		}
	}
	finding := event("evt_c0", "finding.created", map[string]any{"externalId": "C-0", "title": "found by the scanner"})
	res := s.post(t, finding, nil)
	select {
	case imp := <-done:
		t.Logf("the import answered %d before the finding was refused: the test did not meet it pending", imp.Code)
		done <- imp
	default:
	}
	res.ExpectProblem(http.StatusConflict, "IMPORT_IN_PROGRESS")
	if res.Header().Get("Retry-After") == "" {
		t.Error("IMPORT_IN_PROGRESS without Retry-After")
	}
	if imp := <-done; imp.Code != http.StatusOK && imp.Code != http.StatusCreated {
		t.Fatalf("import: %d %s", imp.Code, imp.Body)
	}
	expectAck(t, s.post(t, finding, nil), false) // refused, so not recorded: processed now
	var n int64
	var title string
	if err := env.App.DB.DB.Raw(`SELECT COUNT(*), MAX(title) FROM risks WHERE tenant_id = ? AND external_id = 'C-0'`, a.ID).
		Row().Scan(&n, &title); err != nil {
		t.Fatal(err)
	}
	if n != 1 || title != "found by the scanner" {
		t.Errorf("C-0 after the redelivery: %d risks, title %q; want the imported one, updated", n, title)
	}
}
