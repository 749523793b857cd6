package riskhttp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/apiversion"
	"github.com/riskapi/riskapi/internal/tenants"
)

// TestExportImportsBackAsItself: the first round trip a risk manager tries (issue
// 43, contract section 13) — a session exports its register as CSV over a real
// connection and imports the same file back, in live data and in the sandbox:
// the dry run would create nothing and the import creates nothing, every row
// naming its risk by id and changing none, owners that are users included, and a
// description with Windows line breaks, which a CSV reader turns into "\n".
func TestExportImportsBackAsItself(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.TenantAt("Acme", apiversion.V20270115) // the owner as an object, as the dashboard sends it
	srv := env.Server()
	admin := apitest.LoginAs(t, env, a.Email, a.Password).Token
	member := env.User(a.ID, tenants.RoleMember)
	for _, mode := range []string{"live", "test"} {
		send := func(method, path, contentType string, body []byte) []byte {
			t.Helper()
			req, err := http.NewRequest(method, srv.URL+path, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+admin)
			req.Header.Set("Riskapi-Mode", mode)
			if contentType != "" {
				req.Header.Set("Content-Type", contentType)
			}
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			out, _ := io.ReadAll(res.Body)
			if res.StatusCode/100 != 2 {
				t.Fatalf("%s: %s %s: %d %s", mode, method, path, res.StatusCode, out)
			}
			return out
		}
		bodies := []map[string]any{
			{"title": "Flood", "likelihood": 3, "impact": 4, "treatment": "mitigate", "reviewDate": "2027-01-31",
				"residualLikelihood": 2, "residualImpact": 2, "metadata": map[string]string{"site": "Lyon", "q": "say \"hi\", ok"}},
			{"title": "=SUM(A1)", "description": "-1+1 @ home", "category": "+cmd", "owner": map[string]any{"name": "Ada"}},
			{"title": "Owned by a user", "owner": map[string]any{"userId": member.ID}, "status": "mitigated", "reviewEvery": "P3M"},
			{"title": "Bare"},
			{"title": "Typed on Windows", "description": "line one\r\nline two\nline three"},
		}
		for _, b := range bodies {
			j, _ := json.Marshal(b)
			send(http.MethodPost, "/v1/risks", "application/json", j)
		}
		csvFile := send(http.MethodGet, "/v1/risks/export?format=csv", "", nil)
		var rep report
		for _, q := range []string{"?dryRun=true", ""} {
			body, ct := apitest.Multipart("", apitest.FilePart("file", "risks.csv", "text/csv", string(csvFile)))
			if err := json.Unmarshal(send(http.MethodPost, "/v1/risks/import"+q, ct, body), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Created != 0 || rep.Updated != 0 || rep.Unchanged != len(bodies) {
				t.Errorf("%s: import%s of its own export: %+v, want %d unchanged", mode, q, rep, len(bodies))
			}
		}
		if again := send(http.MethodGet, "/v1/risks/export?format=csv", "", nil); !bytes.Equal(again, csvFile) {
			t.Errorf("%s: the import changed the register:\n%s\nwant\n%s", mode, again, csvFile)
		}
	}
}
