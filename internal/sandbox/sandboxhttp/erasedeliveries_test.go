package sandboxhttp_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/events/delivery"
	"github.com/riskapi/riskapi/internal/events/webhooktest"
)

// TestEraseCountsDeliveredDeliveries: deliveries that went through to a real
// receiver leave the queue for the delivery log; erasing the sandbox counts them
// (each once), and the log is empty after it. A failing delivery awaiting its
// retry — in the queue and in the log — counts once too.
func TestEraseCountsDeliveredDeliveries(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *config.Config) { c.Outbound.AllowPrivate = true })
	a := env.Tenant("Acme")
	session := apitest.Login(t, env, a).Token
	testKey := env.TestKey(a)
	inTest := http.Header{"Riskapi-Mode": {"test"}}
	ok, failing := webhooktest.NewReceiver(t), webhooktest.NewReceiver(t)
	failing.Answer(func(int, webhooktest.Delivery) int { return http.StatusInternalServerError })
	endpoint := func(url string) string {
		return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints", Bearer: session,
			Header: inTest, JSON: map[string]any{"url": url, "events": []string{"risk.created"}}}).
			Expect(http.StatusCreated).Map()["id"].(string)
	}
	good := endpoint(ok.URL() + "/hook")
	bad := endpoint(failing.URL() + "/hook")

	w := env.App.Events.Worker
	w.Poll = 20 * time.Millisecond
	// The failing delivery's retry stays queued until the erasure.
	w.Backoff = delivery.Backoff{Base: time.Hour, Max: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	var running sync.WaitGroup // (this package's tests have a make of their own)
	running.Go(func() { w.Run(ctx) })
	t.Cleanup(func() { cancel(); running.Wait() })

	for _, title := range []string{"one", "two"} {
		env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: testKey, JSON: map[string]any{"title": title}}).
			Expect(http.StatusCreated)
	}
	ok.WaitIDs(t, 2, 5*time.Second)
	logged := func(id string) int {
		return len(env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/webhook-endpoints/" + id + "/deliveries",
			Bearer: session, Header: inTest}).Expect(http.StatusOK).Map()["data"].([]any))
	}
	deadline := time.Now().Add(5 * time.Second)
	for (logged(good) < 2 || logged(bad) < 2) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if logged(good) != 2 || logged(bad) != 2 {
		t.Fatalf("delivery logs hold %d and %d attempts, want 2 each before erasing", logged(good), logged(bad))
	}

	erased := env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v1/sandbox/data", Bearer: session}).Expect(http.StatusOK)
	apitest.LoadSpec(t, "../../../docs/openapi.yaml").Check(t, http.MethodDelete, "/v1/sandbox/data", nil, erased)
	out := erased.Map()
	if out["deliveries"] != 4.0 || out["events"] != 2.0 {
		t.Errorf("erased %v: want 4 deliveries (2 delivered, 2 failed awaiting a retry) of 2 events", out)
	}
	if logged(good) != 0 || logged(bad) != 0 {
		t.Errorf("delivery logs hold %d and %d attempts after erasing, want none", logged(good), logged(bad))
	}
}
