package riskapi_test

import (
	"context"
	"errors"
	"testing"

	riskapi "github.com/riskapi/riskapi/sdk"
)

// TestContractSnippet compiles and runs the snippet of the API contract
// (section 6) exactly as written there: it is the surface that integrators and
// the acceptance checks compile against, so it must never break.
func TestContractSnippet(t *testing.T) {
	srv := newFakeServer()
	defer srv.Close()
	ctx := context.Background()
	apiKey := testAPIKey
	baseURL := srv.URL

	c, err := riskapi.NewClient(apiKey, riskapi.WithBaseURL(baseURL))
	r, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{
		Title: "Vendor contract missing a DPA", Likelihood: riskapi.Ptr(3), Impact: riskapi.Ptr(4),
	})
	// r.ID, r.RiskScore, r.Title
	var apiErr *riskapi.Error
	if errors.As(err, &apiErr) {
		_ = apiErr.Status
		_ = apiErr.Code
		_ = apiErr.RequestID
	}

	if err != nil {
		t.Fatal(err)
	}
	if r.ID == "" || r.RiskScore == nil || *r.RiskScore != 12 || r.Title != "Vendor contract missing a DPA" {
		t.Errorf("risk = %+v", r)
	}
	// The fields have the contract's types: Status int, Code and RequestID string.
	var status int = (&riskapi.Error{}).Status
	var code, requestID string = (&riskapi.Error{}).Code, (&riskapi.Error{}).RequestID
	_, _, _ = status, code, requestID
}
