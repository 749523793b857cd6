package riskhttp_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskstore"
	"github.com/riskapi/riskapi/internal/risks/riskview"
)

type noRecord struct{}

func (noRecord) Record(context.Context, changes.Change) error { return nil }

func exportOf(t *testing.T, env *apitest.Env, key, query string) *apitest.Response {
	t.Helper()
	res := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/export?" + query, Bearer: key}).Expect(http.StatusOK)
	if cd := res.Header().Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") {
		t.Errorf("Content-Disposition = %q, want an attachment", cd)
	}
	return res
}

// TestExportListsTheSelection: CSV and NDJSON exports hold exactly the risks the
// filters select, in the sort's order; the CSV has a header of the field names and
// guards formula cells.
func TestExportListsTheSelection(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	all := register(t, env, a.Key)
	formula := create(env, a.Key, map[string]any{"title": "=HYPERLINK(\"http://x\")", "description": "@SUM(A1)",
		"owner": "-1+1", "category": "+cmd", "status": "closed", "metadata": map[string]string{"k": "v"}})
	tabbed := create(env, a.Key, map[string]any{"title": "Tabbed cells", "description": "\t=1+1", "status": "closed"})
	returned := create(env, a.Key, map[string]any{"title": "Returned cells", "description": "\r=1+1", "status": "closed"})
	var want []full
	for _, r := range all {
		if r.Status == "open" {
			want = append(want, r)
		}
	}
	want = ordered(want, "-riskScore")

	rows, err := csv.NewReader(exportOf(t, env, a.Key, "format=csv&status=open&sort=-riskScore").Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rows[0], riskview.Columns) {
		t.Fatalf("header = %v, want %v", rows[0], riskview.Columns)
	}
	var got []string
	for _, row := range rows[1:] {
		got = append(got, row[0])
	}
	if !slices.Equal(got, idsOf(want)) {
		t.Errorf("CSV rows %v,\nwant %v", got, idsOf(want))
	}
	col := func(row []string, name string) string { return row[slices.Index(riskview.Columns, name)] }
	if r := rows[1]; col(r, "metadata") == "" || col(r, "createdAt") == "" {
		t.Errorf("first row %v lacks metadata or createdAt", r)
	}

	rows, _ = csv.NewReader(exportOf(t, env, a.Key, "q=HYPERLINK").Body).ReadAll()
	if len(rows) != 2 {
		t.Fatalf("export of the formula risk has %d rows, want header and one", len(rows))
	}
	for name, want := range map[string]string{"title": `'=HYPERLINK("http://x")`, "description": "'@SUM(A1)",
		"owner": "'-1+1", "category": "'+cmd", "metadata": `{"k":"v"}`, "id": formula.ID} {
		if got := col(rows[1], name); got != want {
			t.Errorf("CSV %s = %q, want %q", name, got, want)
		}
	}
	for _, r := range []struct{ q, id, want string }{{"Tabbed", tabbed.ID, "'\t=1+1"}, {"Returned", returned.ID, "'\r=1+1"}} {
		rows, _ = csv.NewReader(exportOf(t, env, a.Key, "q="+r.q).Body).ReadAll()
		if len(rows) != 2 || col(rows[1], "id") != r.id || col(rows[1], "description") != r.want {
			t.Errorf("export of %q: %q, want its description %q", r.q, rows, r.want)
		}
	}

	res := exportOf(t, env, a.Key, "format=ndjson&sort=title&treatment=accept,avoid")
	if ct := res.Header().Get("Content-Type"); ct != "application/x-ndjson" {
		t.Errorf("Content-Type = %q", ct)
	}
	got = nil
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		var r full
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r.ID)
	}
	var treated []full
	for _, r := range all {
		if r.Treatment != nil && (*r.Treatment == "accept" || *r.Treatment == "avoid") {
			treated = append(treated, r)
		}
	}
	if !slices.Equal(got, idsOf(ordered(treated, "title"))) {
		t.Errorf("NDJSON %v,\nwant %v", got, idsOf(ordered(treated, "title")))
	}
	for _, tt := range []struct{ query, param string }{
		{"format=xlsx", "format"}, {"limit=5", "limit"}, {"sort=owner", "sort"}, {"bogus=1", "bogus"},
	} {
		expectInvalid(t, env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/export?" + tt.query, Bearer: a.Key}), tt.param)
	}
}

// TestExportStreamsEveryRisk: an export larger than one batch holds every risk once,
// in order, across the batches it was read in.
func TestExportStreamsEveryRisk(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	store := riskstore.New(env.App.DB.DB, noRecord{})
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 1203
	for i := range n {
		title := fmt.Sprintf("r%04d", i%600) // ties across batches, broken by id
		r, err := risks.New(ids.New(ids.Risk), a.ID, risks.Fields{Title: &title}, base.Add(time.Duration(i)*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Create(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := csv.NewReader(exportOf(t, env, a.Key, "sort=-title").Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != n+1 {
		t.Fatalf("%d rows, want %d and the header", len(rows), n)
	}
	seen := map[string]bool{}
	for i, row := range rows[1:] {
		if seen[row[0]] {
			t.Fatalf("%s exported twice", row[0])
		}
		seen[row[0]] = true
		if i > 0 {
			prev := rows[i]
			if prev[2] < row[2] || (prev[2] == row[2] && prev[0] < row[0]) {
				t.Fatalf("row %d (%s %s) is out of order after (%s %s)", i+1, row[2], row[0], prev[2], prev[0])
			}
		}
	}
}
