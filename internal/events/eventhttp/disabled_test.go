package eventhttp_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/events/webhooktest"
	"github.com/riskapi/riskapi/internal/webhooks"
)

// TestDisabledTenantIsDisabledForWebhooks: a disabled tenant's inbound webhooks
// answer 401 and create nothing, and its pending outbound deliveries wait until it
// is enabled again, then go out (issue 25, item 7).
func TestDisabledTenantIsDisabledForWebhooks(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate)
	a := env.Tenant("Acme")
	ctx := context.Background()
	tok := login(t, env, a)
	rcv := webhooktest.NewReceiver(t)
	createEndpoint(t, env, tok, rcv.URL())
	env.Do(apitest.Request{Method: "POST", Path: "/v1/risks", Bearer: tok, JSON: map[string]any{"title": "t"}}).Expect(201)
	src, err := env.App.Webhooks.CreateSource(ctx, a.ID, "scanner")
	if err != nil {
		t.Fatal(err)
	}
	if err := env.App.Tenants.SetTenantDisabled(ctx, a.ID, true); err != nil {
		t.Fatal(err)
	}

	body := `{"id":"f-1","type":"finding.created","data":{"externalId":"x-1","title":"Open S3 bucket"}}`
	inbound := func() *apitest.Response {
		return env.Do(apitest.Request{Method: "POST", Path: "/webhooks/inbound/scanner", Body: body, Header: http.Header{
			"Webhook-Signature": {webhooks.Sign(src.Secret, time.Now(), []byte(body))}}})
	}
	inbound().ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")

	start(t, env)
	time.Sleep(time.Second) // the worker polls every 20 ms and retries within 200 ms
	if n := len(rcv.Deliveries()); n != 0 {
		t.Fatalf("%d deliveries of a disabled tenant's event, want none until it is enabled", n)
	}
	if err := env.App.Tenants.SetTenantDisabled(ctx, a.ID, false); err != nil {
		t.Fatal(err)
	}
	env.App.Events.Worker.Wake()
	rcv.WaitIDs(t, 1, 10*time.Second)
	inbound().Expect(http.StatusOK)
}
