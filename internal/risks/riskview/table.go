package riskview

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/riskapi/riskapi/internal/risks"
)

// Columns are the header of a CSV export, in order: the fields of Risk, and
// externalId, which an import upserts by (docs/register.md). An import reads the
// same names; ReadOnlyColumns it ignores.
var Columns = []string{"id", "externalId", "title", "description", "category", "likelihood", "impact",
	"riskScore", "status", "owner", "treatment", "reviewDate", "residualLikelihood", "residualImpact",
	"residualScore", "metadata", "version", "createdAt", "updatedAt"}

// ReadOnlyColumns are the columns of an export an import ignores: the server sets them.
var ReadOnlyColumns = []string{"id", "version", "riskScore", "residualScore", "createdAt", "updatedAt"}

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
	md, _ := json.Marshal(Of(r).Metadata) // a map of strings always marshals
	out := []string{r.ID, text(r.ExternalID), r.Title, r.Description, r.Category, num(r.Likelihood),
		num(r.Impact), num(r.RiskScore), string(r.Status), r.Owner, treatment, text(r.ReviewDate),
		num(r.ResidualLikelihood), num(r.ResidualImpact), num(r.ResidualScore), string(md),
		strconv.FormatInt(r.Version, 10), r.CreatedAt.UTC().Format(time.RFC3339Nano),
		r.UpdatedAt.UTC().Format(time.RFC3339Nano)}
	for i := range out {
		out[i] = Guard(out[i])
	}
	return out
}

// Guard keeps a spreadsheet from reading cell as a formula: a cell that starts with
// = + - or @ — after any leading quotes, so that Unguard can tell a guard from a
// quote of the value's own — is written with one more leading '.
func Guard(cell string) string {
	if formula(cell) {
		return "'" + cell
	}
	return cell
}

// Unguard undoes Guard: one leading ' before = + - or @ (after any further
// quotes) is dropped, so an export imports back to the same values.
func Unguard(cell string) string {
	if strings.HasPrefix(cell, "'") && formula(cell[1:]) {
		return cell[1:]
	}
	return cell
}

func formula(cell string) bool {
	rest := strings.TrimLeft(cell, "'")
	return rest != "" && strings.ContainsRune("=+-@", rune(rest[0]))
}
