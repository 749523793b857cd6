package eventhttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/app"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/events/webhooktest"
)

// endpointState is an endpoint as GET /v1/webhook-endpoints/{id} shows it.
type endpointState struct {
	ID                      string     `json:"id"`
	URL                     string     `json:"url"`
	Events                  []string   `json:"events"`
	Description             string     `json:"description"`
	DisabledAt              *time.Time `json:"disabledAt"`
	FailingSince            *time.Time `json:"failingSince"`
	PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt"`
	Secret                  string     `json:"secret"`
	Version                 int64      `json:"version"`
}

type attempt struct {
	EventID string `json:"eventId"`
	Attempt int    `json:"attempt"`
	Outcome string `json:"outcome"`
	Status  *int   `json:"status"`
}

type auditEntry struct {
	Action string `json:"action"`
	Actor  struct {
		Type string `json:"type"`
	} `json:"actor"`
	Target struct {
		ID string `json:"id"`
	} `json:"target"`
	Changes map[string]any `json:"changes"`
}

func getEndpoint(t *testing.T, env *apitest.Env, tok, id string) endpointState {
	t.Helper()
	var e endpointState
	apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v1/webhook-endpoints/" + id, Bearer: tok}).Expect(200).Decode(&e)
	return e
}

func post(t *testing.T, env *apitest.Env, tok, path string, body any) *apitest.Response {
	t.Helper()
	return apitest.Do(t, env, apitest.Request{Method: "POST", Path: path, Bearer: tok, JSON: body})
}

func attempts(t *testing.T, env *apitest.Env, tok, id string) []attempt {
	t.Helper()
	var page struct{ Data []attempt }
	apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v1/webhook-endpoints/" + id + "/deliveries", Bearer: tok}).
		Expect(200).Decode(&page)
	return page.Data
}

func auditOf(t *testing.T, env *apitest.Env, tok, action string) []auditEntry {
	t.Helper()
	var page struct{ Data []auditEntry }
	apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v1/audit-log?action=" + action, Bearer: tok}).Expect(200).Decode(&page)
	return page.Data
}

func createRisk(t *testing.T, env *apitest.Env, a *apitest.Tenant, title string) string {
	t.Helper()
	var r struct{ ID string }
	apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": title}}).
		Expect(201).Decode(&r)
	return r.ID
}

// verifyGo checks d's signature against secret with the Standard Webhooks Go
// library, which accepts a header carrying several signatures if one matches.
func verifyGo(secret string, d webhooktest.Delivery) error {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return err
	}
	return wh.Verify(d.Body, d.Header)
}

// eventDeliveries returns the receiver's deliveries whose body is of type typ.
func eventDeliveries(r *webhooktest.Receiver, typ string) []webhooktest.Delivery {
	var out []webhooktest.Delivery
	for _, d := range r.Deliveries() {
		var b struct{ Type string }
		if json.Unmarshal(d.Body, &b) == nil && b.Type == typ {
			out = append(out, d)
		}
	}
	return out
}

func waitFor(t *testing.T, what string, timeout time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPatchEndpoint: PATCH changes the URL, the subscription and the description
// (members left out stay), later events go to the new URL only, and the change is
// audited; a private URL is refused as at creation when private addresses are not
// allowed.
func TestPatchEndpoint(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate)
	a := env.Tenant("Acme")
	tok := login(t, env, a)
	first, second := webhooktest.NewReceiver(t), webhooktest.NewReceiver(t)
	ep := createEndpoint(t, env, tok, first.URL()+"/hook", "risk.created")
	start(t, env)

	var got endpointState
	apitest.Do(t, env, apitest.Request{Method: "PATCH", Path: "/v1/webhook-endpoints/" + ep.ID, Bearer: tok,
		JSON: map[string]any{"url": second.URL() + "/new", "description": "billing"}}).Expect(200).Decode(&got)
	if got.URL != second.URL()+"/new" || got.Description != "billing" || len(got.Events) != 1 || got.Events[0] != "risk.created" {
		t.Fatalf("after PATCH: %+v", got)
	}
	apitest.Do(t, env, apitest.Request{Method: "PATCH", Path: "/v1/webhook-endpoints/" + ep.ID, Bearer: tok,
		JSON: map[string]any{"events": []string{"no.such"}}}).ExpectProblem(400, "VALIDATION_FAILED")
	apitest.Do(t, env, apitest.Request{Method: "PATCH", Path: "/v1/webhook-endpoints/" + ep.ID, Bearer: tok,
		JSON: map[string]any{"events": []string{"risk.deleted"}}}).Expect(200)
	id := createRisk(t, env, a, "to the new URL")
	apitest.Do(t, env, apitest.Request{Method: "DELETE", Path: "/v2/risks/" + id, Bearer: a.Key}).Expect(204)
	waitFor(t, "risk.deleted at the new URL", 5*time.Second, func() bool { return len(second.Deliveries()) == 1 })
	time.Sleep(100 * time.Millisecond)
	if n := len(first.Deliveries()); n != 0 {
		t.Fatalf("the old URL got %d deliveries", n)
	}
	if ds := second.Deliveries(); len(eventDeliveries(second, "risk.deleted")) != 1 {
		t.Fatalf("new URL got %d deliveries, want only risk.deleted", len(ds))
	}
	webhooktest.VerifyWithNode(t, ep.Secret, second.Deliveries())
	if n := len(auditOf(t, env, tok, "webhook_endpoint.updated")); n != 2 {
		t.Fatalf("%d webhook_endpoint.updated entries, want 2 (the refused PATCH records nothing)", n)
	}

	strict := apitest.NewWith(t, app.Options{Webhooks: app.WebhookOptions{Resolver: publicResolver{}}})
	b := strict.Tenant("Beta")
	btok := login(t, strict, b)
	var e endpoint
	strict.Do(apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints", Bearer: btok,
		JSON: map[string]any{"url": "https://example.com/hook"}}).Expect(201).Decode(&e)
	apitest.Do(t, strict, apitest.Request{Method: "PATCH", Path: "/v1/webhook-endpoints/" + e.ID, Bearer: btok,
		JSON: map[string]any{"url": "http://127.0.0.1:9/hook"}}).ExpectProblem(400, "VALIDATION_FAILED")
}

// publicResolver resolves every host to a public address, so that only the URL
// given as an IP literal is refused.
type publicResolver struct{}

func (publicResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("8.8.8.8")}, nil
}

// TestDisabledEndpointSkipsAndRedelivers: events arriving while an endpoint is
// disabled are not sent but logged as skipped deliveries; enabled again, it gets
// new events, and a redelivery sends the skipped one, signed.
func TestDisabledEndpointSkipsAndRedelivers(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate)
	a := env.Tenant("Acme")
	tok := login(t, env, a)
	rcv := webhooktest.NewReceiver(t)
	ep := createEndpoint(t, env, tok, rcv.URL()+"/hook", "risk.created")
	start(t, env)

	var off endpointState
	post(t, env, tok, "/v1/webhook-endpoints/"+ep.ID+"/disable", nil).Expect(200).Decode(&off)
	if off.DisabledAt == nil {
		t.Fatal("disable: disabledAt is null")
	}
	post(t, env, tok, "/v1/webhook-endpoints/"+ep.ID+"/disable", nil).Expect(200)
	createRisk(t, env, a, "while disabled")
	time.Sleep(300 * time.Millisecond)
	if n := len(rcv.Deliveries()); n != 0 {
		t.Fatalf("a disabled endpoint got %d deliveries", n)
	}
	log := attempts(t, env, tok, ep.ID)
	if len(log) != 1 || log[0].Outcome != "skipped" || log[0].Attempt != 0 || log[0].Status != nil {
		t.Fatalf("delivery log %+v, want one skipped entry", log)
	}
	skipped := log[0].EventID

	var on endpointState
	post(t, env, tok, "/v1/webhook-endpoints/"+ep.ID+"/enable", nil).Expect(200).Decode(&on)
	if on.DisabledAt != nil {
		t.Fatal("enable: disabledAt is set")
	}
	createRisk(t, env, a, "after enabling")
	rcv.WaitIDs(t, 1, 5*time.Second)
	post(t, env, tok, "/v1/events/"+skipped+"/redeliver", nil).Expect(202)
	ids := rcv.WaitIDs(t, 2, 5*time.Second)
	if ids[skipped] != 1 {
		t.Fatalf("the skipped event was delivered %d times after its redelivery, want 1", ids[skipped])
	}
	webhooktest.VerifyWithNode(t, ep.Secret, rcv.Deliveries())
	for _, action := range []string{"webhook_endpoint.disabled", "webhook_endpoint.enabled"} {
		if n := len(auditOf(t, env, tok, action)); n != 1 {
			t.Fatalf("%d %s entries, want 1 (a second disable changes nothing)", n, action)
		}
	}
	var evs struct{ Data []event }
	apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/events?type=webhook_endpoint.disabled", Bearer: a.Key}).
		Expect(200).Decode(&evs)
	if len(evs.Data) != 1 || evs.Data[0].Data.Object["id"] != ep.ID {
		t.Fatalf("webhook_endpoint.disabled events %+v, want one of %s", evs.Data, ep.ID)
	}
}

// TestPingAnswersItsOutcome: a ping sends a signed endpoint.ping at once and answers
// the endpoint's status and the time it took, also for a failing endpoint, which
// the delivery log does not count.
func TestPingAnswersItsOutcome(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate)
	a := env.Tenant("Acme")
	tok := login(t, env, a)
	rcv := webhooktest.NewReceiver(t)
	rcv.Delay(30 * time.Millisecond)
	ep := createEndpoint(t, env, tok, rcv.URL()+"/hook")

	var ok struct {
		Status     *int    `json:"status"`
		Delivered  bool    `json:"delivered"`
		Error      *string `json:"error"`
		DurationMs int64   `json:"durationMs"`
	}
	post(t, env, tok, "/v1/webhook-endpoints/"+ep.ID+"/ping", nil).Expect(200).Decode(&ok)
	if ok.Status == nil || *ok.Status != 204 || !ok.Delivered || ok.Error != nil || ok.DurationMs < 30 {
		t.Fatalf("ping answered %+v, want 204 delivered in at least 30 ms", ok)
	}
	pings := eventDeliveries(rcv, "endpoint.ping")
	if len(pings) != 1 {
		t.Fatalf("%d pings received, want 1", len(pings))
	}
	if err := verifyGo(ep.Secret, pings[0]); err != nil {
		t.Fatalf("ping signature: %v", err)
	}
	webhooktest.VerifyWithNode(t, ep.Secret, pings)

	rcv.Answer(func(int, webhooktest.Delivery) int { return 503 })
	var bad struct {
		Status    *int    `json:"status"`
		Delivered bool    `json:"delivered"`
		Error     *string `json:"error"`
	}
	post(t, env, tok, "/v1/webhook-endpoints/"+ep.ID+"/ping", nil).Expect(200).Decode(&bad)
	if bad.Status == nil || *bad.Status != 503 || bad.Delivered || bad.Error == nil {
		t.Fatalf("failed ping answered %+v, want 503 not delivered", bad)
	}
	if n := len(attempts(t, env, tok, ep.ID)); n != 0 {
		t.Fatalf("pings made %d delivery-log entries, want none", n)
	}
	rcv.Down()
	post(t, env, tok, "/v1/webhook-endpoints/"+ep.ID+"/ping", nil).Expect(200).Decode(&bad)
	if bad.Status != nil || bad.Delivered {
		t.Fatalf("ping of a down endpoint answered %+v, want no status", bad)
	}
}

// TestRollSecretSignsWithBothUntilTheOldExpires: after a roll every delivery
// carries two signatures, each verifying under its own secret with the Standard
// Webhooks libraries, until the old secret's overlap ends; then only the new one
// signs, and the old secret no longer verifies. The secret is shown once, the roll
// audited without it.
func TestRollSecretSignsWithBothUntilTheOldExpires(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate)
	a := env.Tenant("Acme")
	tok := login(t, env, a)
	rcv := webhooktest.NewReceiver(t)
	ep := createEndpoint(t, env, tok, rcv.URL()+"/hook", "risk.created")
	start(t, env)

	post(t, env, tok, "/v1/webhook-endpoints/"+ep.ID+"/roll-secret", map[string]any{"expiresIn": 604801}).
		ExpectProblem(400, "VALIDATION_FAILED")
	var rolled endpointState
	rolledAt := time.Now()
	post(t, env, tok, "/v1/webhook-endpoints/"+ep.ID+"/roll-secret", map[string]any{"expiresIn": 2}).Expect(200).Decode(&rolled)
	if rolled.Secret == "" || rolled.Secret == ep.Secret || rolled.PreviousSecretExpiresAt == nil {
		t.Fatalf("roll answered %+v: want a new secret and the old one's end", rolled)
	}
	if got := getEndpoint(t, env, tok, ep.ID); got.Secret != "" {
		t.Fatal("GET shows the secret")
	}
	createRisk(t, env, a, "during the overlap")
	rcv.WaitIDs(t, 1, 5*time.Second)
	during := rcv.Deliveries()[0]
	if sigs := strings.Fields(during.Header.Get("webhook-signature")); len(sigs) != 2 {
		t.Fatalf("webhook-signature %q during the overlap, want two signatures", during.Header.Get("webhook-signature"))
	}
	for _, secret := range []string{ep.Secret, rolled.Secret} {
		if err := verifyGo(secret, during); err != nil {
			t.Fatalf("during the overlap, a secret does not verify: %v", err)
		}
		webhooktest.VerifyWithNode(t, secret, []webhooktest.Delivery{during})
	}

	time.Sleep(time.Until(rolledAt.Add(2100 * time.Millisecond)))
	createRisk(t, env, a, "after the overlap")
	rcv.WaitIDs(t, 2, 5*time.Second)
	after := rcv.Deliveries()[1]
	if sigs := strings.Fields(after.Header.Get("webhook-signature")); len(sigs) != 1 {
		t.Fatalf("webhook-signature %q after the overlap, want one", after.Header.Get("webhook-signature"))
	}
	if err := verifyGo(rolled.Secret, after); err != nil {
		t.Fatalf("new secret: %v", err)
	}
	if verifyGo(ep.Secret, after) == nil || webhooktest.NodeVerify(ep.Secret, []webhooktest.Delivery{after}) == nil {
		t.Fatal("the old secret still verifies after its overlap")
	}
	entries := auditOf(t, env, tok, "webhook_endpoint.secret_rolled")
	if len(entries) != 1 {
		t.Fatalf("%d secret_rolled entries, want 1", len(entries))
	}
	raw, _ := json.Marshal(entries[0])
	if strings.Contains(string(raw), rolled.Secret[len("whsec_"):]) || strings.Contains(string(raw), ep.Secret[len("whsec_"):]) {
		t.Fatal("the audit entry shows a secret")
	}
	// With expiresIn 0 the old secret stops at once.
	var now endpointState
	post(t, env, tok, "/v1/webhook-endpoints/"+ep.ID+"/roll-secret", map[string]any{"expiresIn": 0}).Expect(200).Decode(&now)
	if now.PreviousSecretExpiresAt != nil {
		t.Fatalf("expiresIn 0 left previousSecretExpiresAt %v", now.PreviousSecretExpiresAt)
	}
	apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints/" + ep.ID + "/roll-secret", Bearer: tok,
		Header: http.Header{"Idempotency-Key": {"roll-secret-01"}}, JSON: map[string]any{"expiresIn": 0}}).
		ExpectProblem(422, "IDEMPOTENCY_UNSUPPORTED_ROUTE")
}

// TestFailingEndpointIsDisabled: an endpoint whose every delivery fails for
// WEBHOOK_AUTO_DISABLE_AFTER (here 1s, real time) is disabled, with a
// webhook_endpoint.disabled event and an audit entry by system; its pending
// retries become skipped entries; an endpoint that delivers in between is not.
func TestFailingEndpointIsDisabled(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate, func(c *config.Config) { c.Outbound.AutoDisableAfter = time.Second })
	a := env.Tenant("Acme")
	tok := login(t, env, a)
	failing, healthy := webhooktest.NewReceiver(t), webhooktest.NewReceiver(t)
	failing.Answer(func(int, webhooktest.Delivery) int { return 500 })
	// The healthy one fails every other attempt: never failing for a whole second.
	healthy.Answer(func(n int, _ webhooktest.Delivery) int { return []int{500, 204}[n%2] })
	bad := createEndpoint(t, env, tok, failing.URL()+"/hook", "risk.created")
	good := createEndpoint(t, env, tok, healthy.URL()+"/hook", "risk.created", "webhook_endpoint.disabled")
	start(t, env)
	began := time.Now()
	for i := range 3 {
		createRisk(t, env, a, "r"+string(rune('a'+i)))
	}
	waitFor(t, "the failing endpoint disabled", 10*time.Second, func() bool {
		return getEndpoint(t, env, tok, bad.ID).DisabledAt != nil
	})
	if took := time.Since(began); took < time.Second {
		t.Fatalf("disabled after %s, before WEBHOOK_AUTO_DISABLE_AFTER", took)
	}
	for i := range 3 {
		createRisk(t, env, a, "more"+string(rune('a'+i)))
	}
	time.Sleep(300 * time.Millisecond)
	if got := getEndpoint(t, env, tok, good.ID); got.DisabledAt != nil {
		t.Fatal("an endpoint that delivered was disabled")
	}
	entries := auditOf(t, env, tok, "webhook_endpoint.disabled")
	if len(entries) != 1 || entries[0].Target.ID != bad.ID || entries[0].Actor.Type != "system" {
		t.Fatalf("webhook_endpoint.disabled entries %+v, want one of %s by system", entries, bad.ID)
	}
	var evs struct{ Data []event }
	apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/events?type=webhook_endpoint.disabled", Bearer: a.Key}).
		Expect(200).Decode(&evs)
	if len(evs.Data) != 1 || evs.Data[0].Data.Object["id"] != bad.ID {
		t.Fatalf("events %+v, want one webhook_endpoint.disabled of %s", evs.Data, bad.ID)
	}
	// The healthy endpoint receives the event about the other's disabling, signed.
	waitFor(t, "webhook_endpoint.disabled delivered to the healthy endpoint", 5*time.Second, func() bool {
		return len(eventDeliveries(healthy, "webhook_endpoint.disabled")) > 0
	})
	webhooktest.VerifyWithNode(t, good.Secret, eventDeliveries(healthy, "webhook_endpoint.disabled"))
	sent := len(failing.Deliveries())
	time.Sleep(300 * time.Millisecond)
	if n := len(failing.Deliveries()); n != sent {
		t.Fatalf("the disabled endpoint got %d more attempts", n-sent)
	}
	skipped := 0
	for _, x := range attempts(t, env, tok, bad.ID) {
		if x.Outcome == "skipped" {
			skipped++
		}
	}
	if skipped < 3 {
		t.Fatalf("%d skipped entries, want at least the 3 events after disabling", skipped)
	}
}

// TestRollSecretDuringOverlapIsRefused: while a roll's old secret still signs, a
// second roll is refused (400 VALIDATION_FAILED naming id, as a rolled API key)
// and the old secret keeps the overlap promised; of many rolls at once exactly
// one succeeds.
func TestRollSecretDuringOverlapIsRefused(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate)
	a := env.Tenant("Acme")
	tok := login(t, env, a)
	ep := createEndpoint(t, env, tok, "https://example.com/hook", "risk.created")
	roll := "/v1/webhook-endpoints/" + ep.ID + "/roll-secret"
	var first endpointState
	post(t, env, tok, roll, map[string]any{"expiresIn": 60}).Expect(200).Decode(&first)
	res := post(t, env, tok, roll, map[string]any{"expiresIn": 60}).ExpectProblem(400, "VALIDATION_FAILED")
	if !strings.Contains(res.Body.String(), `"id"`) {
		t.Errorf("second roll: %s, want id named", res.Body)
	}
	if got := getEndpoint(t, env, tok, ep.ID); got.PreviousSecretExpiresAt == nil || !got.PreviousSecretExpiresAt.Equal(*first.PreviousSecretExpiresAt) {
		t.Errorf("after a refused roll previousSecretExpiresAt = %v, want %v", got.PreviousSecretExpiresAt, first.PreviousSecretExpiresAt)
	}

	other := createEndpoint(t, env, tok, "https://example.com/other", "risk.created")
	const n = 16
	codes := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes <- env.Do(apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints/" + other.ID + "/roll-secret", Bearer: tok,
				JSON: map[string]any{"expiresIn": 60}}).Code
		}()
	}
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	if count[200] != 1 || count[400] != n-1 {
		t.Errorf("%d concurrent rolls answered %v, want one 200 and the rest 400", n, count)
	}
	if entries := auditOf(t, env, tok, "webhook_endpoint.secret_rolled"); len(entries) != 2 {
		t.Errorf("%d secret_rolled entries, want 2 (one per endpoint)", len(entries))
	}
}

// TestEmptyEventsAreRefused: "events": [] on creation or PATCH is 400
// VALIDATION_FAILED naming events, not a subscription to every type; omitted
// events still mean every type.
func TestEmptyEventsAreRefused(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate)
	a := env.Tenant("Acme")
	tok := login(t, env, a)
	res := post(t, env, tok, "/v1/webhook-endpoints", map[string]any{"url": "https://example.com/hook", "events": []string{}}).
		ExpectProblem(400, "VALIDATION_FAILED")
	if !strings.Contains(res.Body.String(), `"events"`) {
		t.Errorf("empty events on creation: %s, want events named", res.Body)
	}
	ep := createEndpoint(t, env, tok, "https://example.com/hook", "risk.created")
	res = apitest.Do(t, env, apitest.Request{Method: "PATCH", Path: "/v1/webhook-endpoints/" + ep.ID, Bearer: tok,
		JSON: map[string]any{"events": []string{}}}).ExpectProblem(400, "VALIDATION_FAILED")
	if !strings.Contains(res.Body.String(), `"events"`) {
		t.Errorf("empty events on PATCH: %s, want events named", res.Body)
	}
	if got := getEndpoint(t, env, tok, ep.ID); len(got.Events) != 1 || got.Events[0] != "risk.created" {
		t.Errorf("events after a refused PATCH = %v, want [risk.created]", got.Events)
	}
	if all := createEndpoint(t, env, tok, "https://example.com/all"); len(all.Events) != 1 || all.Events[0] != "*" {
		t.Errorf("omitted events = %v, want [\"*\"]", all.Events)
	}
}

// TestDisableEnableHonourIfMatch: disable and enable with a stale If-Match are 412
// PRECONDITION_FAILED with the endpoint as stored in current and change nothing;
// with the current ETag, or none, they apply.
func TestDisableEnableHonourIfMatch(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate)
	a := env.Tenant("Acme")
	tok := login(t, env, a)
	ep := createEndpoint(t, env, tok, "https://example.com/hook", "risk.created")
	at := func(action, etag string) *apitest.Response {
		return apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints/" + ep.ID + "/" + action,
			Bearer: tok, Header: ifMatchHeader(etag)})
	}
	res := at("disable", `"1"`).Expect(200)
	if res.Header().Get("ETag") != `"2"` {
		t.Fatalf("ETag after disable %q, want \"2\"", res.Header().Get("ETag"))
	}
	cur := at("enable", `"1"`).ExpectProblem(412, "PRECONDITION_FAILED").Map()["current"].(map[string]any)
	if cur["disabledAt"] == nil || cur["version"] != float64(2) {
		t.Errorf("412 current = %v, want the endpoint disabled at version 2", cur)
	}
	if got := getEndpoint(t, env, tok, ep.ID); got.DisabledAt == nil {
		t.Error("a stale enable enabled the endpoint")
	}
	at("disable", `"1"`).ExpectProblem(412, "PRECONDITION_FAILED")
	at("enable", `"2"`).Expect(200)
	at("disable", "").Expect(200)
}

// TestDeleteHonoursIfMatch: a DELETE of an endpoint with a stale If-Match, or one
// naming a version it never had, is 412 with the endpoint as stored in current,
// and the endpoint stays, deliveries and all; with the current ETag, or none, it
// is deleted.
func TestDeleteHonoursIfMatch(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate)
	a := env.Tenant("Acme")
	tok := login(t, env, a)
	ep := createEndpoint(t, env, tok, "https://example.com/hook", "risk.created")
	del := func(id, etag string) *apitest.Response {
		return apitest.Do(t, env, apitest.Request{Method: "DELETE", Path: "/v1/webhook-endpoints/" + id, Bearer: tok,
			Header: ifMatchHeader(etag)})
	}
	apitest.Do(t, env, apitest.Request{Method: "PATCH", Path: "/v1/webhook-endpoints/" + ep.ID, Bearer: tok,
		JSON: map[string]any{"description": "second version"}}).Expect(200)
	for _, stale := range []string{`"1"`, `"99"`} {
		res := del(ep.ID, stale).ExpectProblem(412, "PRECONDITION_FAILED")
		if cur := res.Map()["current"].(map[string]any); cur["version"] != float64(2) || cur["secret"] != nil {
			t.Errorf("If-Match %s: 412 current = %v, want version 2 without its secret", stale, cur)
		}
		if got := getEndpoint(t, env, tok, ep.ID); got.Version != 2 {
			t.Fatalf("If-Match %s: the endpoint after a refused DELETE: %+v", stale, got)
		}
	}
	del(ep.ID, `"2"`).Expect(204)
	apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v1/webhook-endpoints/" + ep.ID, Bearer: tok}).ExpectProblem(404, "NOT_FOUND")
	other := createEndpoint(t, env, tok, "https://example.com/other", "risk.created")
	del(other.ID, "").Expect(204)
}

// ifMatchHeader is an If-Match of etag, or no header for "".
func ifMatchHeader(etag string) http.Header {
	if etag == "" {
		return nil
	}
	return http.Header{"If-Match": {etag}}
}
