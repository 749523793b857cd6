package riskview

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
)

// Columns are the header of a CSV export, in order: the fields of Risk, and
// externalId, which an import upserts by (docs/register.md). The owner is two
// columns in every API version: owner, its text (a user owner's email), and
// ownerId, a user owner's ID (empty for a name owner). An import reads the
// same names; ReadOnlyColumns it ignores.
var Columns = []string{"id", "externalId", "title", "description", "category", "likelihood", "impact",
	"riskScore", "status", "owner", "ownerId", "treatment", "reviewDate", "reviewEvery", "residualLikelihood", "residualImpact",
	"residualScore", "metadata", "version", "createdAt", "updatedAt"}

// ReadOnlyColumns are the columns of an export an import ignores: the server sets
// them. (The id column is read, to find the risk a row updates, never written.)
var ReadOnlyColumns = []string{"version", "riskScore", "residualScore", "createdAt", "updatedAt"}

// Cells returns r as one CSV record under Columns: absent values empty, metadata as
// a JSON object, every cell guarded against formula injection (Guard).
func Cells(r *risks.Risk) []string {
	num := func(n *int) string {
		if n == nil {
			return ""
		}
		return strconv.Itoa(*n)
	}
	text := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	treatment := ""
	if r.Treatment != nil {
		treatment = string(*r.Treatment)
	}
	every := ""
	if r.ReviewEvery != nil {
		every = string(*r.ReviewEvery)
	}
	md, _ := json.Marshal(Of(r).Metadata) // a map of strings always marshals
	out := []string{r.ID, text(r.ExternalID), r.Title, r.Description, r.Category, num(r.Likelihood),
		num(r.Impact), num(r.RiskScore), string(r.Status), r.Owner, text(r.OwnerUserID), treatment, text(r.ReviewDate), every,
		num(r.ResidualLikelihood), num(r.ResidualImpact), num(r.ResidualScore), string(md),
		strconv.FormatInt(r.Version, 10), r.CreatedAt.UTC().Format(time.RFC3339Nano),
		r.UpdatedAt.UTC().Format(time.RFC3339Nano)}
	for i := range out {
		out[i] = Guard(out[i])
	}
	return out
}

// Guard keeps a spreadsheet from reading cell as a formula: a cell that starts with
// = + - @, a tab or a carriage return (OWASP, CSV injection) — after any leading
// quotes, so that Unguard can tell a guard from a quote of the value's own — is
// written with one more leading '.
func Guard(cell string) string {
	if formula(cell) {
		return "'" + cell
	}
	return cell
}

// Unguard undoes Guard: one leading ' before = + - @, a tab or a carriage return
// (after any further quotes) is dropped, so an export imports back to the same values.
func Unguard(cell string) string {
	if strings.HasPrefix(cell, "'") && formula(cell[1:]) {
		return cell[1:]
	}
	return cell
}

func formula(cell string) bool {
	rest := strings.TrimLeft(cell, "'")
	return rest != "" && strings.ContainsRune("=+-@\t\r", rune(rest[0]))
}

// CheckHeader refuses a CSV header naming a column twice or one that is no column
// of an export: 400 VALIDATION_FAILED naming it, row 1.
func CheckHeader(header []string) error {
	var errs []problem.FieldError
	seen := map[string]bool{}
	for _, h := range header {
		switch {
		case !slices.Contains(Columns, h):
			detail := "is no column of a risk export"
			if len(header) == 1 && strings.ContainsAny(h, ";\t") {
				// A spreadsheet set to another separator (a semicolon in many locales)
				// gives one column whose name holds them all.
				detail += ": the file looks separated by semicolons or tabs; save it as CSV with commas"
			}
			errs = append(errs, problem.FieldError{Row: 1, Field: h, Detail: detail})
		case seen[h]:
			errs = append(errs, problem.FieldError{Row: 1, Field: h, Detail: "is named twice"})
		}
		seen[h] = true
	}
	if p := problem.Rows(errs); p != nil {
		return p
	}
	return nil
}

// ReadRow reads one CSV record under header (CheckHeader'd) as an import row: the
// id and externalId, and the change of every writable column present — an empty cell is
// null, or "" for a text field; metadata is a JSON object (empty: none). Read-only
// columns are ignored, and a guard quote (Guard) is dropped from every cell. It
// returns the row's field errors, Row set.
func ReadRow(row int, header, cells []string) (risks.ImportRow, []problem.FieldError) {
	out := risks.ImportRow{Row: row, Columns: header}
	var errs []problem.FieldError
	u := &out.Change
	for i, name := range header {
		v := Unguard(cells[i])
		if bad := BadText(v); bad != "" {
			errs = append(errs, problem.FieldError{Row: row, Field: name, Detail: bad})
			continue
		}
		var err string
		switch name {
		case "id":
			if v != "" {
				out.ID = &v
			}
		case "externalId":
			if v != "" {
				out.ExternalID = &v
			}
		case "title":
			u.Title = &v
		case "description":
			u.Description = &v
		case "category":
			u.Category = &v
		case "owner":
			u.Owner = &v
		case "ownerId":
			if v != "" {
				u.OwnerUserID = &v
			}
		case "status":
			if v != "" {
				s := risks.Status(v)
				u.Status = &s
			}
		case "treatment":
			u.Treatment = &risks.Nullable[risks.Treatment]{Value: risks.Treatment(v), Null: v == ""}
		case "reviewDate":
			u.ReviewDate = &risks.Nullable[string]{Value: v, Null: v == ""}
		case "reviewEvery":
			u.ReviewEvery = &risks.Nullable[risks.Cadence]{Value: risks.Cadence(v), Null: v == ""}
		case "likelihood":
			u.Likelihood, err = cellInt(v)
		case "impact":
			u.Impact, err = cellInt(v)
		case "residualLikelihood":
			u.ResidualLikelihood, err = cellInt(v)
		case "residualImpact":
			u.ResidualImpact, err = cellInt(v)
		case "metadata":
			u.Metadata = map[string]string{}
			// The JSON API's own decoder: a \u0000 or a lone surrogate escaped in the
			// cell is refused as in a request body, never stored (docs/register.md).
			if v != "" && v != "null" && jsonbody.Unmarshal([]byte(v), &u.Metadata) != nil {
				err = `must be a JSON object of strings, e.g. {"ticket":"SEC-1"}, with no \u0000 and no lone surrogate`
			}
		}
		if err != "" {
			errs = append(errs, problem.FieldError{Row: row, Field: name, Detail: err})
		}
	}
	if u.OwnerUserID != nil {
		// A user owner's text is the user's email, filled when the row is written
		// (risks.FillOwner); an owner cell beside it is what an export wrote.
		empty := ""
		u.Owner = &empty
	}
	return out, errs
}

// BadText says why s cannot be stored as text, or "" when it can: bytes that are no
// UTF-8 (PostgreSQL refuses them, SQLite would keep them and hand clients bytes no
// JSON can carry) or a NUL (PostgreSQL's text cannot hold one).
func BadText(s string) string {
	switch {
	case !utf8.ValidString(s):
		return "must be UTF-8 text: the cell has bytes that are no UTF-8"
	case strings.IndexByte(s, 0) >= 0:
		return "must not contain a NUL byte"
	}
	return ""
}

// cellInt reads an integer cell: empty is null.
func cellInt(v string) (*risks.Nullable[int], string) {
	if v == "" {
		return &risks.Nullable[int]{Null: true}, ""
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return nil, "must be an integer, or empty"
	}
	return &risks.Nullable[int]{Value: n}, ""
}
