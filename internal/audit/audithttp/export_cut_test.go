package audithttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/audit"
	"github.com/riskapi/riskapi/internal/audit/auditstore"
	"github.com/riskapi/riskapi/internal/ids"
)

// TestExportCutMidwayBreaksTheConnection: when the store fails after the audit
// export's first batch was sent, the client's read of the body fails (unexpected
// EOF); it never gets a short file that ends like a whole one. Both formats.
func TestExportCutMidwayBreaksTheConnection(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"csv", "ndjson"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			env := apitest.New(t)
			a := env.Tenant("Acme")
			store := auditstore.New(env.App.DB.DB)
			at := time.Now().UTC().Add(-time.Hour)
			for i := range 1200 {
				e := &audit.Entry{ID: ids.NewAt(ids.Audit, at.Add(time.Duration(i)*time.Millisecond)), TenantID: a.ID,
					OccurredAt: at, Actor: audit.Actor{Type: "system"}, Action: "risk.created",
					Target: audit.Target{Type: "risk", ID: ids.New(ids.Risk)}}
				if err := store.Insert(context.Background(), e); err != nil {
					t.Fatal(err)
				}
			}
			srv := env.Server()
			env.FailReads("audit_log", 1) // the first batch reads, the second fails
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v2/audit-log/export?format="+format, nil)
			req.Header.Set("Authorization", "Bearer "+a.Key)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200", res.StatusCode)
			}
			body, err := io.ReadAll(res.Body)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("reading the body: err = %v after %d bytes, want unexpected EOF", err, len(body))
			}
			if lines := strings.Count(string(body), "\n"); lines < 500 {
				t.Errorf("%d lines arrived before the cut, want the first batch of 500", lines)
			}
			if logs := env.LogText(); !strings.Contains(logs, apitest.ErrInjected.Error()) {
				t.Errorf("the server log does not name the cut's cause:\n%s", logs)
			}
		})
	}
}
