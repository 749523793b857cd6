package riskhttp

import (
	"encoding/csv"
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskview"
	"github.com/riskapi/riskapi/internal/route"
)

// exportBatch is how many risks an export reads per statement: the server holds one
// batch at a time, whatever the export's size.
const exportBatch = 500

// export streams the risks the filters select, in the sort's order, as CSV (a header
// of riskview.Columns) or NDJSON (one risk as the API shows it per line). It pages
// through the store like a list, writing and flushing each batch.
func (h handlers) export(c echo.Context) error {
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	q, err := queryOf(c.QueryParams(), "format", "sort")
	format := c.QueryParam("format")
	if format == "" {
		format = "csv"
	}
	var ferr error
	if format != "csv" && format != "ndjson" {
		ferr = problem.Invalid("format", "must be csv or ndjson")
	}
	if err := problem.Join(err, ferr); err != nil {
		return err
	}
	var write func(*risks.Risk) error
	res := c.Response()
	switch format {
	case "csv":
		w := csv.NewWriter(res)
		write = func(r *risks.Risk) error { return w.Write(riskview.Cells(r)) }
		res.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
		if err := h.stream(c, tenant, q, format, func() error { return w.Write(riskview.Columns) }, write, w.Flush); err != nil {
			return err
		}
		return w.Error()
	default: // "ndjson", the only other format the check above lets through
		enc := json.NewEncoder(res)
		write = func(r *risks.Risk) error { return enc.Encode(riskview.Of(r)) }
		res.Header().Set(echo.HeaderContentType, "application/x-ndjson")
		return h.stream(c, tenant, q, format, func() error { return nil }, write, func() {})
	}
}

// stream reads the first batch before answering — so a failing store is still a
// problem response — then writes the header, every risk and a flush per batch. An
// error after the header breaks the connection (the server's observe aborts a
// committed response): a client never takes a cut export for a whole one.
func (h handlers) stream(c echo.Context, tenant string, q risks.Query, format string, header func() error,
	write func(*risks.Risk) error, flush func()) error {
	ctx := c.Request().Context()
	f := risks.Filter{Query: q, Limit: exportBatch}
	batch, more, err := h.risks.Store.List(ctx, tenant, f)
	if err != nil {
		return err
	}
	res := c.Response()
	res.Header().Set(echo.HeaderContentDisposition, `attachment; filename="risks.`+format+`"`)
	res.WriteHeader(http.StatusOK)
	if err := header(); err != nil {
		return err
	}
	for {
		for _, r := range batch {
			if err := write(r); err != nil {
				return err
			}
		}
		flush()
		res.Flush()
		if !more || len(batch) == 0 {
			return nil
		}
		last := batch[len(batch)-1]
		f.After = &risks.Mark{Key: q.Sort.Key(last), ID: last.ID}
		if batch, more, err = h.risks.Store.List(ctx, tenant, f); err != nil {
			return err
		}
	}
}
