package riskapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// RiskFilter selects risks for List, Heatmap and Export (docs/register.md).
// Zero fields are not sent; a risk is selected when every given filter holds.
type RiskFilter struct {
	// Status and Treatment select risks with any of the values given.
	Status    []RiskStatus
	Treatment []RiskTreatment
	// Category and Owner, when non-nil, must match exactly (Ptr("") selects
	// risks without one); Owner is the owner's name (a user owner's email).
	Category, Owner *string
	// OwnerID, when non-nil, selects the risks owned by that user ("usr_…").
	OwnerID *string
	// MinScore and MaxScore bound riskScore, inclusive, when 1–25.
	MinScore, MaxScore int
	// Likelihood, Impact, ResidualLikelihood and ResidualImpact select risks whose
	// factor is any of the values (1–5): Likelihood {4} with Impact {2} is one
	// heat-map cell's risks.
	Likelihood, Impact, ResidualLikelihood, ResidualImpact []int
	// ReviewBefore (YYYY-MM-DD) selects reviews due before that date.
	ReviewBefore string
	// CreatedSince ≤ createdAt < CreatedUntil; UpdatedSince ≤ updatedAt.
	CreatedSince, CreatedUntil, UpdatedSince time.Time
	// Q is words that must each occur, case-insensitive, in the title or the
	// description.
	Q string
	// Metadata selects risks whose metadata holds each key with that value.
	Metadata map[string]string
	// OutsideAppetite, when non-nil, selects the risks whose riskScore is above
	// their appetite (true) or every other risk (false).
	OutsideAppetite *bool
}

// addTo sets f's query parameters in q.
func (f *RiskFilter) addTo(q url.Values) {
	join := func(name string, vs []string) {
		if len(vs) > 0 {
			q.Set(name, strings.Join(vs, ","))
		}
	}
	statuses := make([]string, len(f.Status))
	for i, s := range f.Status {
		statuses[i] = string(s)
	}
	treatments := make([]string, len(f.Treatment))
	for i, t := range f.Treatment {
		treatments[i] = string(t)
	}
	join("status", statuses)
	join("treatment", treatments)
	for name, v := range map[string]*string{"category": f.Category, "owner": f.Owner, "ownerId": f.OwnerID} {
		if v != nil {
			q.Set(name, *v)
		}
	}
	for name, ns := range map[string][]int{"likelihood": f.Likelihood, "impact": f.Impact,
		"residualLikelihood": f.ResidualLikelihood, "residualImpact": f.ResidualImpact} {
		vs := make([]string, len(ns))
		for i, n := range ns {
			vs[i] = strconv.Itoa(n)
		}
		join(name, vs)
	}
	for name, n := range map[string]int{"minScore": f.MinScore, "maxScore": f.MaxScore} {
		if n != 0 {
			q.Set(name, strconv.Itoa(n))
		}
	}
	for name, t := range map[string]time.Time{"createdSince": f.CreatedSince, "createdUntil": f.CreatedUntil,
		"updatedSince": f.UpdatedSince} {
		if !t.IsZero() {
			q.Set(name, t.UTC().Format(time.RFC3339Nano))
		}
	}
	if f.ReviewBefore != "" {
		q.Set("reviewBefore", f.ReviewBefore)
	}
	if f.Q != "" {
		q.Set("q", f.Q)
	}
	for k, v := range f.Metadata {
		q.Set("metadata["+k+"]", v)
	}
	if f.OutsideAppetite != nil {
		q.Set("outsideAppetite", strconv.FormatBool(*f.OutsideAppetite))
	}
}

// RiskHeatmapParams selects the risks a heat map counts and its basis.
type RiskHeatmapParams struct {
	Params
	RiskFilter
	// Residual counts residualLikelihood × residualImpact instead of
	// likelihood × impact.
	Residual bool
	// MovedSince, a day (YYYY-MM-DD, UTC), asks where the selected risks were when
	// it began: the answer's Moves. Such a heat map is a costly read.
	MovedSince string
}

// RiskHeatmap counts risks by likelihood and impact.
type RiskHeatmap struct {
	// Basis is "inherent" or "residual".
	Basis string `json:"basis"`
	// Cells holds all 25 cells, likelihood-major.
	Cells []RiskHeatmapCell `json:"cells"`
	// Unassessed counts the selected risks lacking one or both factors.
	Unassessed int `json:"unassessed"`
	// MovedSince is the day asked for (RiskHeatmapParams.MovedSince), else "".
	MovedSince string `json:"movedSince,omitempty"`
	// Moves, with MovedSince only, counts the selected risks whose cell then
	// differs from their cell now, by (From, To).
	Moves []RiskHeatmapMove `json:"moves,omitempty"`
	// LastResponse describes the HTTP exchange.
	LastResponse *APIResponse `json:"-"`
}

// RiskHeatmapCell is one cell of a heat map.
type RiskHeatmapCell struct {
	Likelihood int `json:"likelihood"` // 1–5
	Impact     int `json:"impact"`     // 1–5
	Count      int `json:"count"`
}

// RiskHeatmapMove counts the risks that were in From when the day began and are
// in To now. From is nil for risks on no cell then (created since, or unassessed
// then), To for risks unassessed now.
type RiskHeatmapMove struct {
	From  *RiskHeatmapPlace `json:"from"`
	To    *RiskHeatmapPlace `json:"to"`
	Count int               `json:"count"`
}

// RiskHeatmapPlace is a cell of the heat map, without a count.
type RiskHeatmapPlace struct {
	Likelihood int `json:"likelihood"` // 1–5
	Impact     int `json:"impact"`     // 1–5
}

// Heatmap counts the risks p selects by likelihood and impact (GET
// /v2/risks/heatmap). p may be nil.
//
// Errors: *Error with 400 VALIDATION_FAILED naming a bad filter.
func (s *RisksService) Heatmap(ctx context.Context, p *RiskHeatmapParams) (*RiskHeatmap, error) {
	if p == nil {
		p = &RiskHeatmapParams{}
	}
	q := url.Values{}
	p.RiskFilter.addTo(q)
	if p.Residual {
		q.Set("basis", "residual")
	}
	if p.MovedSince != "" {
		q.Set("movedSince", p.MovedSince)
	}
	out := new(RiskHeatmap)
	info, err := s.client.doJSON(ctx, http.MethodGet, "/v2/risks/heatmap", q, &p.Params, nil, out)
	if err != nil {
		return nil, err
	}
	out.LastResponse = info
	return out, nil
}

// RiskExportParams selects the risks of an export, their order and format.
type RiskExportParams struct {
	Params
	RiskFilter
	// Format is "csv" (default) or "ndjson".
	Format string
	// Sort orders the export as RiskListParams.Sort does.
	Sort string
}

// Export opens a streamed export of the risks p selects (GET
// /v2/risks/export): read the CSV (a header row, then one risk per row) or
// NDJSON from the result and close it. The server streams it, so any size
// fits; ctx must stay live until it is read. The call is retried until the
// response headers arrive; an error while reading the body is returned by
// Read. p may be nil.
//
// Errors: *Error with 400 VALIDATION_FAILED naming a bad filter or format.
func (s *RisksService) Export(ctx context.Context, p *RiskExportParams) (*AttachmentContent, error) {
	if p == nil {
		p = &RiskExportParams{}
	}
	q := url.Values{}
	p.RiskFilter.addTo(q)
	if p.Format != "" {
		q.Set("format", p.Format)
	}
	if p.Sort != "" {
		q.Set("sort", p.Sort)
	}
	r := &request{method: http.MethodGet, path: "/v2/risks/export", query: q, params: &p.Params, accept: "*/*"}
	var out *AttachmentContent
	err := s.client.call(ctx, r, func(resp *http.Response, info *APIResponse) error {
		out = &AttachmentContent{Body: resp.Body, ContentType: resp.Header.Get("Content-Type"),
			ContentLength: resp.ContentLength, LastResponse: info}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RiskImportParams is a CSV file to import.
type RiskImportParams struct {
	Params
	// CSV is the file: a header row naming columns of an export, then one
	// risk per row. It is read into memory once, so that every retry sends
	// the same bytes. Required.
	CSV io.Reader
	// DryRun reports what the import would do and writes nothing.
	DryRun bool
}

// RiskImportReport is what an import did (or, dry run, would do).
type RiskImportReport struct {
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	// LastResponse describes the HTTP exchange.
	LastResponse *APIResponse `json:"-"`
}

// Import imports the CSV of p (POST /v2/risks/import) in one unit of work:
// every row is written or none. Rows with an externalId update the risk
// with it, or create it; the same file again changes nothing. The call is
// keyed like every write, so a retry never imports twice.
//
// Errors: *Error with 400 VALIDATION_FAILED whose Errors name every bad
// row (FieldError.Row) and field, 413 PAYLOAD_TOO_LARGE past the server's
// row limit.
func (s *RisksService) Import(ctx context.Context, p *RiskImportParams) (*RiskImportReport, error) {
	if p == nil || p.CSV == nil {
		return nil, fmt.Errorf("riskapi: Risks.Import: no CSV")
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, err := mw.CreateFormFile("file", "risks.csv")
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(part, p.CSV); err != nil {
		return nil, fmt.Errorf("riskapi: Risks.Import: read CSV: %w", err)
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	q := url.Values{}
	if p.DryRun {
		q.Set("dryRun", "true")
	}
	b := body.Bytes()
	r := &request{method: http.MethodPost, path: "/v2/risks/import", query: q, params: &p.Params,
		contentType: mw.FormDataContentType(),
		body: func() (io.ReadCloser, int64, func() error, error) {
			return io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil, nil
		}}
	out := new(RiskImportReport)
	var info *APIResponse
	err = s.client.call(ctx, r, func(resp *http.Response, ri *APIResponse) error {
		info = ri
		return decodeBody(resp, out)
	})
	if err != nil {
		return nil, err
	}
	out.LastResponse = info
	return out, nil
}

// Delete removes the attachment attachmentID (DELETE /v2/attachments/{id},
// answered 204): its content is 404 from then on. Keyed like every write.
//
// Errors: *Error with 404 NOT_FOUND.
func (s *AttachmentsService) Delete(ctx context.Context, attachmentID string) error {
	if attachmentID == "" {
		return errEmptyID
	}
	_, err := s.client.doJSON(ctx, http.MethodDelete, "/v2/attachments/"+url.PathEscape(attachmentID), nil, nil, nil, nil)
	return err
}
