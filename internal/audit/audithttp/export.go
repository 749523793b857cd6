package audithttp

import (
	"encoding/csv"
	"encoding/json"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/audit"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/route"
)

// exportBatch is how many entries the export reads per query: the response streams
// page by page, never holding the whole log.
const exportBatch = 500

// csvHeader names the export's CSV columns; changes is the entry's changes as JSON.
var csvHeader = []string{"id", "occurredAt", "actorType", "actorId", "actorEmail", "action",
	"targetType", "targetId", "changes", "requestId", "ip", "userAgent"}

// export streams every entry matching the filters, newest first, as NDJSON (one
// AuditEntry per line) or CSV (csvHeader). A store failure after the first byte
// breaks the connection (the server's observe aborts a committed response): the
// client sees a failed transfer, never a short body that looks whole
// (docs/audit-log.md).
// Errors before it: 400 VALIDATION_FAILED naming format or a filter.
func (h handlers) export(c echo.Context) error {
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	f, err := filterOf(c)
	if err != nil {
		return err
	}
	var w entryWriter
	res := c.Response()
	switch c.QueryParam("format") {
	case "ndjson":
		res.Header().Set(echo.HeaderContentType, "application/x-ndjson")
		w = ndjsonWriter{json.NewEncoder(res)}
	case "csv":
		res.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
		cw := csv.NewWriter(res)
		w = csvWriter{cw}
		if err := cw.Write(csvHeader); err != nil {
			return err
		}
	default:
		return problem.Invalid("format", "must be ndjson or csv")
	}
	res.Header().Set(echo.HeaderContentDisposition, `attachment; filename="audit-log.`+c.QueryParam("format")+`"`)
	f.Limit = exportBatch
	ctx := c.Request().Context()
	for {
		es, more, err := h.Store.List(ctx, tenant, f)
		if err != nil {
			return err
		}
		for _, e := range es {
			if err := w.write(e); err != nil {
				return err
			}
		}
		if err := w.flush(); err != nil {
			return err
		}
		res.Flush()
		if !more || len(es) == 0 {
			return nil
		}
		f.After = es[len(es)-1].ID
	}
}

// entryWriter writes entries in one export format.
type entryWriter interface {
	write(e *audit.Entry) error
	flush() error
}

type ndjsonWriter struct{ enc *json.Encoder }

func (w ndjsonWriter) write(e *audit.Entry) error { return w.enc.Encode(viewOf(e)) }
func (w ndjsonWriter) flush() error               { return nil }

type csvWriter struct{ w *csv.Writer }

func (w csvWriter) write(e *audit.Entry) error {
	changes := ""
	if e.Changes != nil {
		b, err := json.Marshal(e.Changes)
		if err != nil {
			return err
		}
		changes = string(b)
	}
	row := []string{e.ID, e.OccurredAt.Format("2006-01-02T15:04:05.000000Z07:00"), e.Actor.Type, e.Actor.ID,
		e.Actor.Email, e.Action, e.Target.Type, e.Target.ID, changes, e.RequestID, e.IP, e.UserAgent}
	for i, v := range row {
		row[i] = inert(v)
	}
	return w.w.Write(row)
}

func (w csvWriter) flush() error {
	w.w.Flush()
	return w.w.Error()
}

// inert keeps a cell a spreadsheet would run as a formula (a user agent or a risk
// title is the client's text) from running: it starts such a cell with a quote
// (OWASP, CSV injection).
func inert(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}
