package riskhttp

import (
	"cmp"
	"encoding/csv"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskview"
	"github.com/riskapi/riskapi/internal/route"
	"github.com/riskapi/riskapi/internal/upload"
)

// ImportForm are the form names the import accepts (its route.Body.Form): one file
// part "file", the CSV.
var ImportForm = map[string]upload.Rule{"file": {File: true}}

// importReport is the import's answer (docs/openapi.yaml, ImportReport).
type importReport struct {
	Created   int                  `json:"created"`
	Updated   int                  `json:"updated"`
	Unchanged int                  `json:"unchanged"`
	Errors    []problem.FieldError `json:"errors"`
}

// importCSV reads the uploaded CSV and imports it as one unit of work
// (risks.Service.Import): 201 with the report, also for a dry run, which writes
// nothing; 400 listing every bad row; 413 past MaxImportRows.
func (h handlers) importCSV(c echo.Context) error {
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	dryRun, err := dryRunOf(c)
	if err != nil {
		return err
	}
	form, err := upload.FormOf(c)
	if err != nil {
		return err
	}
	files := form.Files("file")
	if len(files) != 1 {
		return problem.Invalid("file", "is required: send the CSV as the multipart part \"file\"")
	}
	fh, err := files[0].Open()
	if err != nil {
		return err
	}
	defer fh.Close()
	rows, bad, err := h.readCSV(fh)
	if err != nil {
		return err
	}
	// Cells that are no value of their field are reported with every other row's
	// errors, which a dry run finds.
	rep, err := h.risks.Import(c.Request().Context(), tenant, rows, dryRun || len(bad) > 0,
		func() string { return ids.New(ids.Risk) }, h.timestamp())
	if len(bad) > 0 {
		if p := problem.As(err); p != nil && p.Code == problem.ValidationFailed {
			bad = append(bad, p.Errors...)
		} else if err != nil {
			return err
		}
		slices.SortStableFunc(bad, func(a, b problem.FieldError) int { return cmp.Compare(a.Row, b.Row) })
		return problem.Rows(bad)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, importReport{Created: rep.Created, Updated: rep.Updated,
		Unchanged: rep.Unchanged, Errors: []problem.FieldError{}})
}

func dryRunOf(c echo.Context) (bool, error) {
	for name := range c.QueryParams() {
		if name != "dryRun" {
			return false, problem.Invalid(name, "is not a parameter of this route")
		}
	}
	v := c.QueryParam("dryRun")
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, problem.Invalid("dryRun", "must be true or false")
	}
	return b, nil
}

// readCSV reads the header and every row, and the errors of cells that are no value
// of their column. Errors: 400 for a bad header or a file that is no CSV, 413 past
// maxImportRows rows.
func (h handlers) readCSV(r io.Reader) ([]risks.ImportRow, []problem.FieldError, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = false
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil, problem.Invalid("file", "is empty: the first row must name the columns")
	}
	if err != nil {
		return nil, nil, csvError(err)
	}
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff") // a spreadsheet's byte-order mark
	}
	if err := riskview.CheckHeader(header); err != nil {
		return nil, nil, err
	}
	var rows []risks.ImportRow
	var bad []problem.FieldError
	for n := 2; ; n++ {
		cells, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, csvError(err)
		}
		if len(rows) == h.maxImportRows {
			return nil, nil, problem.New(problem.PayloadTooLarge, "the file has more than %d rows (MAX_IMPORT_ROWS)", h.maxImportRows)
		}
		row, errs := riskview.ReadRow(n, header, cells)
		rows, bad = append(rows, row), append(bad, errs...)
	}
	return rows, bad, nil
}

// csvError is a file that is no CSV (or rows of other lengths than the header's):
// 400 naming the row.
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return problem.Rows([]problem.FieldError{{Row: pe.StartLine, Field: "file", Detail: pe.Err.Error()}})
	}
	return err
}
