package sdktest_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	riskapi "github.com/riskapi/riskapi/sdk"
)

// TestRegisterThroughTheSDK: the SDK's list filters and sort, heat map, export
// stream, import and attachment delete against the real server.
func TestRegisterThroughTheSDK(t *testing.T) {
	t.Parallel()
	s := startReal(t)
	c := s.client(t, s.acme.Key, s.srv.URL, newStepClock())
	ctx := t.Context()
	for i, title := range []string{"Vendor DPA", "vendor access", "Backup"} {
		_, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{Title: title, Likelihood: riskapi.Ptr(i + 1),
			Impact: riskapi.Ptr(2), Treatment: riskapi.RiskTreatmentMitigate, Metadata: map[string]string{"n": title[:1]}})
		if err != nil {
			t.Fatal(err)
		}
	}
	var titles []string
	for r, err := range c.Risks.List(ctx, &riskapi.RiskListParams{Limit: 1, Sort: "-title",
		RiskFilter: riskapi.RiskFilter{Q: "VENDOR", MinScore: 3, Treatment: []riskapi.RiskTreatment{riskapi.RiskTreatmentMitigate}}}) {
		if err != nil {
			t.Fatal(err)
		}
		titles = append(titles, r.Title)
	}
	if strings.Join(titles, "|") != "vendor access" {
		t.Errorf("listed %v, want the one vendor risk scoring 3 or more", titles)
	}
	// A heat-map cell's risks: likelihood 1 or 2 with impact 2 (Vendor DPA, vendor access).
	titles = nil
	for r, err := range c.Risks.List(ctx, &riskapi.RiskListParams{Sort: "title",
		RiskFilter: riskapi.RiskFilter{Likelihood: []int{1, 2}, Impact: []int{2}}}) {
		if err != nil {
			t.Fatal(err)
		}
		titles = append(titles, r.Title)
	}
	if strings.Join(titles, "|") != "Vendor DPA|vendor access" {
		t.Errorf("listed %v for likelihood 1,2 × impact 2, want the two vendor risks", titles)
	}
	hm, err := c.Risks.Heatmap(ctx, &riskapi.RiskHeatmapParams{RiskFilter: riskapi.RiskFilter{Metadata: map[string]string{"n": "B"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(hm.Cells) != 25 || hm.Cells[2*5+1].Count != 1 || hm.Basis != "inherent" {
		t.Errorf("heat map %+v, want Backup (3×2) counted", hm)
	}
	export, err := c.Risks.Export(ctx, &riskapi.RiskExportParams{Sort: "title"})
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(export)
	export.Close()
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil || len(rows) != 4 || rows[1][2] != "Backup" {
		t.Fatalf("export %q, %v", body, err)
	}
	rep, err := c.Risks.Import(ctx, &riskapi.RiskImportParams{CSV: strings.NewReader("title,likelihood\nnew,9\n")})
	var apiErr *riskapi.Error
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusBadRequest || len(apiErr.Errors) != 1 ||
		apiErr.Errors[0].Row != 2 || apiErr.Errors[0].Field != "likelihood" {
		t.Fatalf("import of a bad row: %+v, %v; want 400 naming row 2's likelihood", rep, err)
	}
	// The tenant's own export lands on the same risks (their ids): all unchanged.
	rep, err = c.Risks.Import(ctx, &riskapi.RiskImportParams{CSV: bytes.NewReader(body), DryRun: true})
	if err != nil || rep.Created != 0 || rep.Unchanged != 3 {
		t.Fatalf("dry run %+v, %v; want 3 unchanged", rep, err)
	}

	risk, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{Title: "with a file"})
	if err != nil {
		t.Fatal(err)
	}
	att, err := c.Attachments.Upload(ctx, risk.ID, &riskapi.AttachmentUploadParams{File: strings.NewReader("x"), Filename: "x.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Attachments.Delete(ctx, att.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Attachments.Download(ctx, att.ID); !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		t.Errorf("download after delete: %v, want 404", err)
	}
}
