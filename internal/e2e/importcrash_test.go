package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/e2e"
)

// TestCrashMidImport (SQLite): a keyed import of new risks, SIGKILLed while its
// rows are being written in short transactions, leaves them pending; the
// restarted server takes them back, and the client's retry with the same key —
// refused IMPORT_IN_PROGRESS while the take-back runs — creates each risk once,
// with one event and one audit entry each (docs/register.md "Import").
func TestCrashMidImport(t *testing.T) {
	url := dbtest.URL(t)
	if strings.HasPrefix(url, "postgres") {
		t.Skip("PostgreSQL imports in one transaction, which the kill rolls back: TestCrashKeyedWrites's case")
	}
	creds := e2e.ProvisionT(t, url, t.Name())
	in := e2e.StartT(t, e2e.Config{DatabaseURL: url, Lease: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	db, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(query string, args ...any) int64 {
		t.Helper()
		var n int64
		if err := db.DB.WithContext(ctx).Raw(query, args...).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}

	n := scaled(20_000)
	body, contentType := importBody(t, n)
	client := e2e.NewClient(creds.APIKey, 2)
	client.Timeout = 3 * time.Minute
	defer client.Close()
	h := http.Header{"Idempotency-Key": {"crash-mid-import"}, "Content-Type": {contentType}}
	first := make(chan e2e.Answer, 1)
	go func() { first <- client.Send(ctx, http.MethodPost, in.URL(), "/v2/risks/import", h, body) }()
	for count(`SELECT COUNT(*) FROM risks WHERE tenant_id = ? AND import_id IS NOT NULL`, creds.TenantID) < 1000 {
		select {
		case a := <-first:
			t.Fatalf("the import answered %s before 1,000 of its rows were written: make it larger", a)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := in.Kill(); err != nil {
		t.Fatal(err)
	}
	if a := <-first; a.Err == nil {
		t.Fatalf("the import answered %s though its server was killed", a)
	}
	dead := count(`SELECT COUNT(*) FROM risks WHERE tenant_id = ? AND import_id IS NOT NULL`, creds.TenantID)
	if p := count(`SELECT COUNT(*) FROM pending_imports WHERE tenant_id = ?`, creds.TenantID); p != 1 || dead == 0 {
		t.Fatalf("after the kill: %d pending imports, %d of their risks; want 1 and some", p, dead)
	}
	if err := in.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	inProgress := 0
	for attempt := 0; ; attempt++ {
		a := client.Send(ctx, http.MethodPost, in.URL(), "/v2/risks/import", h, body)
		if a.Status == http.StatusCreated {
			break
		}
		if ctx.Err() != nil || (a.Err == nil && a.Status != http.StatusConflict) {
			t.Fatalf("retry %d answered %s", attempt, a)
		}
		if a.Code == "IMPORT_IN_PROGRESS" {
			inProgress++
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%d rows, %d written before the kill, the retry refused IMPORT_IN_PROGRESS %d times while they were taken back",
		n, dead, inProgress)
	for what, got := range map[string]int64{
		"risks":                      count(`SELECT COUNT(*) FROM risks WHERE tenant_id = ?`, creds.TenantID),
		"external IDs":               count(`SELECT COUNT(DISTINCT external_id) FROM risks WHERE tenant_id = ?`, creds.TenantID),
		"risk.created events":        count(`SELECT COUNT(*) FROM events WHERE tenant_id = ? AND type = 'risk.created'`, creds.TenantID),
		"risk.created audit entries": count(`SELECT COUNT(*) FROM audit_log WHERE tenant_id = ? AND action = 'risk.created'`, creds.TenantID),
	} {
		if got != int64(n) {
			t.Errorf("%d %s after the retry, want %d", got, what, n)
		}
	}
	if p := count(`SELECT COUNT(*) FROM pending_imports`); p != 0 {
		t.Errorf("%d imports still pending", p)
	}
}

// importBody is a multipart body of a CSV of n new risks, and its content type.
func importBody(t *testing.T, n int) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	part, err := w.CreateFormFile("file", "risks.csv")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(part, "externalId,title,likelihood,impact")
	for i := range n {
		fmt.Fprintf(part, "CRASH-%d,Imported risk %d,%d,%d\n", i, i, 1+i%5, 1+i/5%5)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), w.FormDataContentType()
}
