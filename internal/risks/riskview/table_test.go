package riskview_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks/risktest"
	"github.com/riskapi/riskapi/internal/risks/riskview"
)

// notExported are the members of riskview.Risk a CSV export leaves out on purpose
// (livemode: an export is of one mode's risks, and an import writes into the
// mode of its request, docs/sandboxes.md); onlyExported the columns that are no member of it: externalId, which
// an import upserts by (docs/register.md).
var (
	notExported  = []string{"livemode"}
	onlyExported = []string{"externalId", "ownerId"}
)

// TestExportHasEveryMember: the CSV columns (riskview.Columns) are the members of a
// risk's public view, bar the exceptions named above, and Cells writes under each
// column the member's value as the JSON shows it — so a field added to the view is
// missing from no export, and no cell lands under another's column.
func TestExportHasEveryMember(t *testing.T) {
	t.Parallel()
	r, err := risktest.Full("risk_1", "ten_1", 1, time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(riskview.Of(r))
	if err != nil {
		t.Fatal(err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(onlyExported)
	for m := range members {
		if !slices.Contains(notExported, m) {
			want = append(want, m)
		}
	}
	got := slices.Clone(riskview.Columns)
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("riskview.Columns differs from the view's members (-members +columns); "+
			"add the column to table.go, or name it in notExported:\n%s", diff)
	}

	cells := riskview.Cells(r)
	if len(cells) != len(riskview.Columns) {
		t.Fatalf("Cells gives %d cells for %d columns", len(cells), len(riskview.Columns))
	}
	for i, col := range riskview.Columns {
		raw, ok := members[col]
		if !ok {
			continue
		}
		var text string
		var owner riskview.Owner
		if col == "owner" && json.Unmarshal(raw, &owner) == nil {
			text = owner.Name // the owner's text; ownerId is its userId
		} else if json.Unmarshal(raw, &text) != nil {
			text = string(raw) // a number or an object, as the JSON writes it
		}
		if got := riskview.Unguard(cells[i]); got != text {
			t.Errorf("column %s holds %q, want the view's %s", col, got, raw)
		}
	}
}

// TestImportReadsEveryWritableColumn: an exported row read back as an import row
// (ReadRow) gives every field of the change, and the external ID: a writable field
// an import ignores leaves it unset.
func TestImportReadsEveryWritableColumn(t *testing.T) {
	t.Parallel()
	r, err := risktest.Full("risk_1", "ten_1", 1, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	row, errs := riskview.ReadRow(2, riskview.Columns, riskview.Cells(r))
	if len(errs) > 0 {
		t.Fatalf("ReadRow of an export: %v", errs)
	}
	// The score is read-only: the import derives it from likelihood and impact.
	if unset := slices.DeleteFunc(risktest.Unset(row.Change), func(f string) bool { return f == "RiskScore" }); len(unset) > 0 {
		t.Errorf("ReadRow leaves %v unset", unset)
	}
	if row.ExternalID == nil || *row.ExternalID != *r.ExternalID {
		t.Errorf("ReadRow's external ID = %v, want %s", row.ExternalID, *r.ExternalID)
	}
}

// An escaped NUL or lone surrogate in a metadata cell is refused as the JSON API
// refuses it: stored, a NUL made every metadata filter of the tenant fail on
// PostgreSQL, and a surrogate became U+FFFD unseen.
func TestImportRefusesEscapedBadTextInMetadata(t *testing.T) {
	header := []string{"title", "metadata"}
	for _, cell := range []string{`{"k":"a\u0000b"}`, `{"k\u0000":"v"}`, `{"k":"\udc00x"}`, `{"k":1}`, `[1]`} {
		_, errs := riskview.ReadRow(2, header, []string{"t", cell})
		if len(errs) != 1 || errs[0].Field != "metadata" || errs[0].Row != 2 {
			t.Errorf("metadata cell %s: errors %+v, want one naming row 2 and metadata", cell, errs)
		}
	}
	for _, cell := range []string{`{"k":"v é"}`, `{}`, `null`, ``} {
		if _, errs := riskview.ReadRow(2, header, []string{"t", cell}); len(errs) != 0 {
			t.Errorf("metadata cell %q refused: %+v", cell, errs)
		}
	}
}

// TestHeaderOfAnotherSeparator: a file saved with semicolons (or tabs) reads as one
// column named by the whole header; the error says how to save it, and a plain
// unknown column keeps the short detail.
func TestHeaderOfAnotherSeparator(t *testing.T) {
	detail := func(header []string) string {
		err := riskview.CheckHeader(header)
		var p *problem.Problem
		if !errors.As(err, &p) || len(p.Errors) == 0 {
			t.Fatalf("CheckHeader(%q) = %v, want a row error", header, err)
		}
		return p.Errors[0].Detail
	}
	for _, h := range []string{"title;category;likelihood", "title\tcategory"} {
		if d := detail([]string{h}); !strings.Contains(d, "save it as CSV with commas") {
			t.Errorf("header %q: detail %q, want the separator named", h, d)
		}
	}
	if d := detail([]string{"title", "colour"}); d != "is no column of a risk export" {
		t.Errorf("an unknown column: detail %q", d)
	}
}
