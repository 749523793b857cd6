package webhookhttp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
)

// TestResponsesMatchSpec: what the webhook route answers is what docs/openapi.yaml
// says, status by status.
func TestResponsesMatchSpec(t *testing.T) {
	t.Parallel()
	spec := apitest.LoadSpec(t, "../../../docs/openapi.yaml")
	env := apitest.New(t)
	a := env.Tenant("Acme")
	s := newSender(t, env, a.ID, "scanner")
	path := "/webhooks/inbound/scanner"
	created := event("evt_spec", "finding.created", map[string]any{"externalId": "FND-S", "title": "T"})
	tests := []struct {
		name   string
		res    *apitest.Response
		status int
	}{
		{"processed", s.post(t, created, nil), 200},
		{"duplicate", s.post(t, created, nil), 200},
		{"bad signature", s.raw(t, created, http.Header{"Webhook-Signature": {"t=1,v1=00"}}), 400},
		{"unknown finding", s.post(t, event("evt_u", "finding.updated", map[string]any{"externalId": "nope"}), nil), 404},
		{"too large", s.post(t, strings.Repeat(" ", 1<<20+1), nil), 413},
		{"with a key", s.post(t, created, http.Header{"Idempotency-Key": {"spec-webhook-key"}}), 422},
	}
	for _, tt := range tests {
		if tt.res.Code != tt.status {
			t.Errorf("%s: status %d, want %d: %s", tt.name, tt.res.Code, tt.status, tt.res.Body)
			continue
		}
		spec.Check(t, http.MethodPost, path, nil, tt.res)
	}
	res := env.Do(apitest.Request{Method: http.MethodPost, Path: "/webhooks/inbound/nobody", Body: created})
	res.T = t
	if res.Code != 401 {
		t.Fatalf("unknown source: %d", res.Code)
	}
	spec.Check(t, http.MethodPost, "/webhooks/inbound/nobody", nil, res)
}
