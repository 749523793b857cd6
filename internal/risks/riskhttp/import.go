package riskhttp

import (
	"encoding/csv"
	"errors"
	"fmt"
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

// importCSV imports the uploaded CSV all or nothing (risks.Service.Import),
// reading it from the upload's spooled file as a stream, once per pass: 201 with
// the report, also for a dry run, which writes nothing; 400 listing the bad rows;
// 409 while another import of the tenant runs; 413 past MaxImportRows.
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
	rep, err := h.risks.Import(c.Request().Context(), tenant, h.csvSource(fh), dryRun,
		func() string { return ids.New(ids.Risk) }, h.timestamp())
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

// maxRowBytes bounds one row of an import's CSV: far above the largest valid row
// (a 10,000-character description, 50 metadata values of 500 characters, each
// character escaped), it keeps a file of one huge cell from being read into memory.
const maxRowBytes = 1 << 20

// errRowTooLarge is a row past maxRowBytes.
var errRowTooLarge = errors.New("row too large")

// csvSource reads f, a seekable file, as an import's rows (risks.ImportSource): from
// its start on every call, one row at a time. Errors: 400 for a bad header, a file
// that is no CSV or a row over maxRowBytes; 413 past maxImportRows rows.
func (h handlers) csvSource(f io.ReadSeeker) risks.ImportSource {
	return func(fn func(risks.ImportRow) error) error {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		lim := &rowLimit{r: f}
		cr := csv.NewReader(lim)
		cr.ReuseRecord = true // each record is read into ImportRow's own strings
		header, err := cr.Read()
		if err != nil && !errors.Is(err, io.EOF) {
			return csvError(err, 1, 0, 0)
		}
		header = slices.Clone(header)
		if len(header) > 0 {
			header[0] = strings.TrimPrefix(header[0], "\ufeff") // a spreadsheet's byte-order mark
		}
		if len(header) == 0 || len(header) == 1 && header[0] == "" { // nothing, or the mark alone
			return problem.Invalid("file", "is empty: the first row must name the columns")
		}
		if err := riskview.CheckHeader(header); err != nil {
			return err
		}
		for n, rows := 2, 0; ; n++ {
			start := cr.InputOffset()
			lim.from = start
			cells, err := cr.Read()
			if errors.Is(err, io.EOF) {
				return nil
			}
			misplacedQuote := errors.Is(err, csv.ErrQuote) || errors.Is(err, csv.ErrBareQuote)
			if misplacedQuote {
				if errors.Is(err, csv.ErrQuote) {
					// Whether the reader ran to the end of the file inside the quotes: the
					// parser says where it stopped, not where the quote opened.
					_, next := cr.Read()
					err = quoteError{err, errors.Is(next, io.EOF)}
				}
			} else if err != nil && !errors.Is(err, csv.ErrFieldCount) {
				return csvError(err, n, len(cells), len(header))
			}
			if rows == h.maxImportRows {
				return problem.New(problem.PayloadTooLarge, "the file has more than %d rows (MAX_IMPORT_ROWS)", h.maxImportRows)
			}
			rows++
			var row risks.ImportRow
			if err != nil {
				// Reported with the file's other errors, not alone: after a record of
				// another length the reader goes on at the next one; after a misplaced
				// quote the records cannot be told apart, so the reading ends there.
				row = risks.ImportRow{Row: n, Columns: header, Unreadable: true,
					Errors: []problem.FieldError{{Row: n, Field: "file", Detail: csvDetail(err, len(cells), len(header))}}}
			} else {
				var errs []problem.FieldError
				row, errs = riskview.ReadRow(n, header, cells)
				row.Errors = errs
			}
			row.Bytes = int(cr.InputOffset() - start)
			if err := fn(row); err != nil || misplacedQuote {
				return err
			}
		}
	}
}

// rowLimit fails a read that reaches more than maxRowBytes past from, the offset
// where the row being read starts (beyond the csv.Reader's buffer of a few KiB).
type rowLimit struct {
	r    io.Reader
	read int64 // bytes read from r
	from int64
}

func (l *rowLimit) Read(p []byte) (int, error) {
	if l.read-l.from > maxRowBytes+64<<10 {
		return 0, errRowTooLarge
	}
	n, err := l.r.Read(p)
	l.read += int64(n)
	return n, err
}

// quoteError is the reader's csv.ErrQuote, and whether the file ended right after it
// (a quoted field never closed reads to the end of the file).
type quoteError struct {
	err   error
	atEnd bool
}

func (e quoteError) Error() string { return e.err.Error() }
func (e quoteError) Unwrap() error { return e.err }

// csvError is a file that is no CSV (or a row over maxRowBytes): 400 naming row,
// the record being read, counted as the value checks count it (the header is row
// 1), with csvDetail's words.
func csvError(err error, row, got, want int) error {
	if detail := csvDetail(err, got, want); detail != "" {
		return problem.Rows([]problem.FieldError{{Row: row, Field: "file", Detail: detail}})
	}
	if errors.Is(err, errRowTooLarge) {
		return problem.Rows([]problem.FieldError{{Row: row, Field: "file",
			Detail: fmt.Sprintf("the row is larger than %d bytes", maxRowBytes)}})
	}
	return err
}

// csvDetail says what is wrong with a record the CSV reader refused (a
// *csv.ParseError; "" for any other error) in words a spreadsheet user can act on,
// naming its line (a quoted field may span lines): a record of got fields where
// the header has want, or a misplaced quote (RFC 4180, section 2).
func csvDetail(err error, got, want int) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		detail := pe.Err.Error()
		switch {
		case errors.Is(pe.Err, csv.ErrFieldCount):
			fields := "fields"
			if got == 1 {
				fields = "field"
			}
			detail = fmt.Sprintf("has %d %s where the header names %d columns (line %d): each row needs one field per column, empty ones included", got, fields, want, pe.StartLine)
		case errors.Is(pe.Err, csv.ErrQuote):
			var qe quoteError
			errors.As(err, &qe)
			switch {
			case qe.atEnd && pe.Line > pe.StartLine:
				detail = fmt.Sprintf(`has a quoted field that is never closed: the row starts on line %d and the file ends inside its quotes: `+
					`close the field with a quote, and write a quote inside it twice ("")`, pe.StartLine)
			case !qe.atEnd:
				detail = fmt.Sprintf(`has text after a quoted field's closing quote (line %d, column %d): `+
					`a quote inside a quoted field is written twice ("")`, pe.Line, pe.Column)
			default: // on the file's last line: either
				detail = fmt.Sprintf(`has a quoted field that is not closed, or text after its closing quote (line %d, column %d): `+
					`a quote inside a quoted field is written twice ("")`, pe.Line, pe.Column)
			}
		case errors.Is(pe.Err, csv.ErrBareQuote):
			detail = fmt.Sprintf(`has a quote inside a field that does not start with one (line %d, column %d): `+
				`quote the whole field and write the quote twice ("say ""yes""")`, pe.Line, pe.Column)
		}
		return detail
	}
	return ""
}
