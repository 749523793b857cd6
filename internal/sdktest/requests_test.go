package sdktest_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	riskapi "github.com/riskapi/riskapi/sdk"
)

// TestRequestLogAndKeyInspector, against the real server: a keyed create and its
// retry are in the request log side by side (paged one entry at a time by the
// iterator), each found again by its request id; the key inspector reports the
// key complete with the request that ran it; an unknown key is a 404 *Error and a
// key without requests:read is refused with 403.
func TestRequestLogAndKeyInspector(t *testing.T) {
	t.Parallel()
	s := startReal(t)
	ctx := context.Background()
	c := s.client(t, s.acme.Key, s.srv.URL, newStepClock())
	params := &riskapi.RiskCreateParams{Title: "Vendor contract missing a DPA", Params: riskapi.Params{IdempotencyKey: "sdk-log-key-1"}}
	first, err := c.Risks.Create(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Risks.Create(ctx, params)
	if err != nil || !again.LastResponse.IdempotentReplayed {
		t.Fatalf("retry: %v, replayed %v", err, again != nil && again.LastResponse.IdempotentReplayed)
	}
	if err := s.env.App.RequestLog.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	var got []*riskapi.LoggedRequest
	for r, err := range c.Requests.List(ctx, &riskapi.RequestListParams{IdempotencyKey: "sdk-log-key-1", Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if len(got) != 2 {
		t.Fatalf("%d entries for the key, want its 2 attempts", len(got))
	}
	if got[0].ID != again.LastResponse.RequestID || got[1].ID != first.LastResponse.RequestID ||
		got[0].IdempotencyOutcome != riskapi.OutcomeReplayed || got[1].IdempotencyOutcome != riskapi.OutcomeExecuted ||
		got[1].Status != http.StatusCreated || got[1].Credential.Type != "api_key" || got[1].Credential.ID != s.acme.KeyID {
		t.Errorf("the key's attempts, newest first: %+v %+v", got[0], got[1])
	}
	one, err := c.Requests.Get(ctx, first.LastResponse.RequestID)
	if err != nil || one.Route != "/v2/risks" || one.IdempotencyKey != "sdk-log-key-1" || one.ErrorCode != "" {
		t.Errorf("Requests.Get: %+v, %v", one, err)
	}
	// The reads above are logged as they end: store them before listing them.
	if err := s.env.App.RequestLog.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	gets, err := riskapi.Collect(c.Requests.List(ctx, &riskapi.RequestListParams{Method: "GET", Since: time.Now().Add(-time.Hour)}))
	if err != nil || len(gets) == 0 {
		t.Errorf("GET entries: %d, %v", len(gets), err)
	}

	k, err := c.IdempotencyKeys.Get(ctx, "sdk-log-key-1", http.MethodPost, "/v2/risks")
	if err != nil {
		t.Fatal(err)
	}
	if k.State != riskapi.KeyComplete || k.StatusCode == nil || *k.StatusCode != 201 || k.RequestID != first.LastResponse.RequestID || k.ExpiresAt == nil {
		t.Errorf("IdempotencyKeys.Get: %+v", k)
	}
	var apiErr *riskapi.Error
	if _, err := c.IdempotencyKeys.Get(ctx, "sdk-never-sent", http.MethodPost, "/v2/risks"); !errors.As(err, &apiErr) || apiErr.Status != 404 || apiErr.Code != "NOT_FOUND" {
		t.Errorf("unknown key: %v", err)
	}
	ro := s.client(t, s.acme.ReadKey, s.srv.URL, newStepClock())
	if _, err := ro.Requests.Get(ctx, first.LastResponse.RequestID); !errors.As(err, &apiErr) || apiErr.Status != 403 {
		t.Errorf("without requests:read: %v", err)
	}
}
