package riskhttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/risks/riskseed"
)

// TestExportCutMidwayBreaksTheConnection: when the store fails after the export's
// first batch was sent, the client's read of the body fails (unexpected EOF); it
// never gets a short file that ends like a whole one. Both formats.
func TestExportCutMidwayBreaksTheConnection(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"csv", "ndjson"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			env := apitest.New(t)
			a := env.Tenant("Acme")
			if err := riskseed.Risks(context.Background(), env.App.DB.DB, a.ID, 0, 1200); err != nil {
				t.Fatal(err)
			}
			srv := env.Server()
			env.FailReads("risks", 1) // the first batch reads, the second fails
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v2/risks/export?format="+format, nil)
			req.Header.Set("Authorization", "Bearer "+a.Key)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200 (the first batch is read before answering)", res.StatusCode)
			}
			body, err := io.ReadAll(res.Body)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("reading the body: err = %v after %d bytes, want unexpected EOF", err, len(body))
			}
			if lines := strings.Count(string(body), "\n"); lines < 500 {
				t.Errorf("%d lines arrived before the cut, want the first batch of 500", lines)
			}
			if logs := env.LogText(); !strings.Contains(logs, `"cut"`) || !strings.Contains(logs, apitest.ErrInjected.Error()) {
				t.Errorf("the server log does not name the cut and its cause:\n%s", logs)
			}
		})
	}
}
