package riskhttp_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/risks/riskview"
)

type report struct {
	Created, Updated, Unchanged int
	Errors                      []struct {
		Row           int
		Field, Detail string
	}
}

func importFile(env *apitest.Env, key, query, file string, header http.Header) *apitest.Response {
	env.T.Helper()
	body, ct := apitest.Multipart("", apitest.FilePart("file", "risks.csv", "text/csv", file))
	return env.Upload("/v2/risks/import"+query, key, header, body, ct)
}

func exportCSV(t *testing.T, env *apitest.Env, key string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(exportOf(t, env, key, "sort=createdAt").Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func csvText(rows [][]string) string {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.WriteAll(rows)
	return b.String()
}

// comparable drops the columns the server sets itself (id, version, timestamps).
func comparable(rows [][]string) [][]string {
	var out [][]string
	for _, r := range rows {
		var kept []string
		for i, c := range r {
			if name := riskview.Columns[i]; name != "id" && name != "version" && name != "createdAt" && name != "updatedAt" {
				kept = append(kept, c)
			}
		}
		out = append(out, kept)
	}
	return out
}

func count(t *testing.T, env *apitest.Env, key string) int {
	t.Helper()
	return len(listAll(t, env, key, "", 100))
}

// TestImportReproducesAnExport: an export imported into another tenant reproduces
// every field value, formula cells included; with external IDs, importing the same
// file again creates nothing and leaves everything unchanged.
func TestImportReproducesAnExport(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b, c := env.Tenant("Acme"), env.Tenant("Beta"), env.Tenant("Gamma")
	register(t, env, a.Key)
	create(env, a.Key, map[string]any{"title": "=HYPERLINK(\"http://x\")", "description": "'@SUM(A1)",
		"owner": "-1+1", "category": "+cmd", "metadata": map[string]string{"formula": "=1+1", "q": "say \"hi\", ok"}})
	exported := exportCSV(t, env, a.Key)

	var rep report
	importFile(env, b.Key, "", csvText(exported), nil).Expect(http.StatusCreated).Decode(&rep)
	if rep.Created != len(exported)-1 || rep.Updated != 0 || rep.Unchanged != 0 {
		t.Fatalf("report %+v, want %d created", rep, len(exported)-1)
	}
	// Each created risk was recorded at the recording point: its risk.created event.
	var events struct{ Data []struct{ Type string } }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/events?type=risk.created&limit=100", Bearer: b.Key}).
		Expect(http.StatusOK).Decode(&events)
	if len(events.Data) != rep.Created {
		t.Errorf("%d risk.created events for %d imported risks", len(events.Data), rep.Created)
	}
	again := exportCSV(t, env, b.Key)
	if diff := slices.CompareFunc(comparable(exported), comparable(again), slices.Compare); diff != 0 {
		t.Errorf("B's export differs from A's:\nA %q\nB %q", comparable(exported), comparable(again))
	}

	// With external IDs: the second import of the same file changes nothing.
	for i := range exported[1:] {
		exported[i+1][slices.Index(riskview.Columns, "externalId")] = fmt.Sprintf("EXT-%d", i)
	}
	importFile(env, c.Key, "", csvText(exported), nil).Expect(http.StatusCreated).Decode(&rep)
	if rep.Created != len(exported)-1 {
		t.Fatalf("first import %+v, want %d created", rep, len(exported)-1)
	}
	before := exportCSV(t, env, c.Key)
	importFile(env, c.Key, "", csvText(exported), nil).Expect(http.StatusCreated).Decode(&rep)
	if rep.Created != 0 || rep.Updated != 0 || rep.Unchanged != len(exported)-1 {
		t.Fatalf("second import %+v, want everything unchanged", rep)
	}
	if after := exportCSV(t, env, c.Key); slices.CompareFunc(before, after, slices.Compare) != 0 {
		t.Errorf("the second import changed risks (versions or timestamps included)")
	}
	// A changed cell updates that risk only, read-only columns ignored.
	exported[1][slices.Index(riskview.Columns, "title")] = "renamed"
	exported[2][slices.Index(riskview.Columns, "version")] = "99"
	importFile(env, c.Key, "", csvText(exported), nil).Expect(http.StatusCreated).Decode(&rep)
	if rep.Created != 0 || rep.Updated != 1 || rep.Unchanged != len(exported)-2 {
		t.Fatalf("third import %+v, want one updated", rep)
	}
}

// TestImportIsAllOrNothing: a file with bad rows writes nothing and names each bad
// row; a dry run writes nothing and reports what the import would do; past
// MAX_IMPORT_ROWS the file is 413.
func TestImportIsAllOrNothing(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *config.Config) { c.Uploads.MaxImportRows = 4 })
	a := env.Tenant("Acme")
	create(env, a.Key, map[string]any{"title": "existing"})
	good := "externalId,title,likelihood,impact,treatment,metadata\n" +
		"F-1,one,2,3,accept,\"{\"\"k\"\":\"\"v\"\"}\"\n" +
		"F-2,two,,,,\n"
	bad := good + "F-3,three,9,1,,\n" + ",,1,1,sometimes,[]\n"
	res := importFile(env, a.Key, "", bad, nil).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	var rep report
	res.Decode(&rep)
	var got []string
	for _, e := range rep.Errors {
		got = append(got, fmt.Sprintf("%d %s", e.Row, e.Field))
		// A CSV clears a field with an empty cell; it cannot send JSON's null.
		if e.Field == "treatment" && e.Detail != "must be one of accept, mitigate, transfer, avoid, or empty" {
			t.Errorf("row %d treatment: %q, want the CSV's words (or empty, not or null)", e.Row, e.Detail)
		}
	}
	// In file order: by row, and within a row by column (docs/register.md).
	if want := []string{"4 likelihood", "5 title", "5 treatment", "5 metadata"}; !slices.Equal(got, want) {
		t.Errorf("errors %v, want %v", got, want)
	}
	if n := count(t, env, a.Key); n != 1 {
		t.Errorf("%d risks after a refused import, want the 1 there before", n)
	}

	res = importFile(env, a.Key, "?dryRun=true", good, nil).Expect(http.StatusCreated)
	res.Decode(&rep)
	if rep.Created != 2 || len(rep.Errors) != 0 {
		t.Errorf("dry run %+v, want 2 created and no errors", rep)
	}
	if n := count(t, env, a.Key); n != 1 {
		t.Errorf("%d risks after a dry run, want 1", n)
	}
	importFile(env, a.Key, "?dryRun=true", bad, nil).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")

	key := http.Header{"Idempotency-Key": {"import-0001"}}
	importFile(env, a.Key, "", good, key).Expect(http.StatusCreated)
	replay := importFile(env, a.Key, "", good, key).Expect(http.StatusCreated)
	if replay.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("the same keyed import again was not a replay")
	}
	if n := count(t, env, a.Key); n != 3 {
		t.Errorf("%d risks after the import, want 3", n)
	}
	dry := importFile(env, a.Key, "?dryRun=true", good, nil).Expect(http.StatusCreated)
	dry.Decode(&rep)
	if rep.Unchanged != 2 {
		t.Errorf("dry run of an imported file %+v, want 2 unchanged", rep)
	}

	five := "title\n" + strings.Repeat("t\n", 5)
	importFile(env, a.Key, "", five, nil).ExpectProblem(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
	for _, tt := range []struct{ query, file, field string }{
		{"", "title,colour\nt,red\n", "colour"},
		{"", "title,title\nt,t\n", "title"},
		{"", "title,owner\nt\n", "file"},
		{"", "", "file"},
		{"", "\ufeff", "file"}, // a spreadsheet's empty file: the byte-order mark alone
		{"?dryRun=maybe", good, "dryRun"},
		{"?force=1", good, "force"},
	} {
		expectInvalid(t, importFile(env, a.Key, tt.query, tt.file, nil), tt.field)
	}
	if n := count(t, env, a.Key); n != 3 {
		t.Errorf("%d risks after refused imports, want 3", n)
	}
	// A file that is no CSV says what to mend in a spreadsheet's words, not the parser's.
	for _, tt := range []struct{ file, want string }{
		{"title,owner\nt\n", "row 2: has 1 field where the header names 2 columns (line 2)"},
		// A quoted field over three lines is one row: the next row is row 3, on line 5.
		{"title,description\nA,\"line1\nline2\nline3\"\nB\n", "row 3: has 1 field where the header names 2 columns (line 5)"},
		{"title,description\nA,\"line1\nline2\"\nB,say \"yes\"\n", "row 3: has a quote inside a field that does not start with one (line 4"},
		{"title,owner\nt,\"Ada\" x\n", `a quote inside a quoted field is written twice ("")`},
		{"title,owner\nt,say \"yes\"\n", `quote the whole field and write the quote twice`},
		// Not closed: named where its row starts, not where the file ends.
		{"title,owner\nGood,x\n\"Unclosed,x\n" + strings.Repeat("t,x\n", 50), "row 3: has a quoted field that is never closed: the row starts on line 3 and the file ends inside its quotes"},
		{"title,owner\nt,\"Ada\" x\nu,v\n", "row 2: has text after a quoted field's closing quote (line 2, column 7)"},
	} {
		res := importFile(env, a.Key, "", tt.file, nil).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
		var bad report
		res.Decode(&bad)
		if len(bad.Errors) != 1 || !strings.Contains(fmt.Sprintf("row %d: %s", bad.Errors[0].Row, bad.Errors[0].Detail), tt.want) {
			t.Errorf("import of %q: errors %+v, want one saying %q", tt.file, bad.Errors, tt.want)
		}
	}
}

// TestImportNamesEveryRowsErrorsInOneAnswer: one refused upload lists every error
// there is to mend, in file order, and writes nothing — a row's unknown ownerId
// beside its other errors, every row of the wrong length, and the rows before a
// misplaced quote (which ends the reading). Each want is the start of
// "row field: detail".
func TestImportNamesEveryRowsErrorsInOneAnswer(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	for _, tt := range []struct {
		name, file string
		want       []string
	}{
		{"an unknown owner", "title,likelihood,ownerId,treatment\nok,2,,\nbad,9,usr_nobody,sometimes\n",
			[]string{"3 likelihood", "3 ownerId: is no user of this tenant", "3 treatment"}},
		{"rows of the wrong length", "title,likelihood,impact\nok,2,3\nfour,1,2,3\none\nbad,9,1\n",
			[]string{"3 file: has 4 fields where the header names 3 columns (line 3)",
				"4 file: has 1 field where the header names 3 columns (line 4)", "5 likelihood"}},
		{"a quote never closed", "title,likelihood,impact\nok,1,2\nbad,9,2\ntoo,many,1,2\nBroken,\"3,3\nA,1,1\n",
			[]string{"3 likelihood", "4 file", "5 file: has a quoted field that is never closed"}},
		{"a bare quote", "title,likelihood,impact\nok,1,2\nbad,9,2\ntoo,many,1,2\nsay \"yes\",3,3\nA,1,1\n",
			[]string{"3 likelihood", "4 file", "5 file: has a quote inside a field"}},
	} {
		res := importFile(env, a.Key, "", tt.file, nil).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
		var rep report
		res.Decode(&rep)
		var got []string
		for _, e := range rep.Errors {
			got = append(got, fmt.Sprintf("%d %s: %s", e.Row, e.Field, e.Detail))
		}
		ok := len(got) == len(tt.want)
		for i := 0; ok && i < len(got); i++ {
			ok = strings.HasPrefix(got[i], tt.want[i])
		}
		if !ok {
			t.Errorf("%s: errors %q, want %q (each the start of one)", tt.name, got, tt.want)
		}
	}
	if n := count(t, env, a.Key); n != 0 {
		t.Errorf("%d risks after refused imports, want 0", n)
	}
}
