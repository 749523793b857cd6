package eventhttp_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/events/delivery"
	"github.com/riskapi/riskapi/internal/events/webhooktest"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/webhooks"
)

func allowPrivate(c *config.Config) { c.Outbound.AllowPrivate = true }

// start runs the app's delivery worker, quick to poll and retry, until t ends.
func start(t testing.TB, env *apitest.Env) {
	t.Helper()
	w := env.App.Events.Worker
	w.Poll = 20 * time.Millisecond
	w.Backoff = delivery.Backoff{Base: 50 * time.Millisecond, Max: 200 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func login(t testing.TB, env *apitest.Env, a *apitest.Tenant) string {
	t.Helper()
	var s struct{ Token string }
	env.Do(apitest.Request{Method: "POST", Path: "/v1/sessions", JSON: map[string]any{"email": a.Email, "password": a.Password}}).
		Expect(201).Decode(&s)
	return s.Token
}

type endpoint struct {
	ID     string   `json:"id"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
	Secret string   `json:"secret"`
}

func createEndpoint(t testing.TB, env *apitest.Env, tok, url string, types ...string) endpoint {
	t.Helper()
	body := map[string]any{"url": url}
	if types != nil {
		body["events"] = types
	}
	var e endpoint
	env.Do(apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints", Bearer: tok, JSON: body}).Expect(201).Decode(&e)
	return e
}

type event struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	CreatedAt time.Time `json:"createdAt"`
	Data      struct {
		Object             map[string]any `json:"object"`
		PreviousAttributes map[string]any `json:"previousAttributes"`
	} `json:"data"`
	Request struct {
		ID             *string `json:"id"`
		IdempotencyKey *string `json:"idempotencyKey"`
	} `json:"request"`
}

func listEvents(t *testing.T, env *apitest.Env, bearer, query string) []event {
	t.Helper()
	var page struct{ Data []event }
	env.Do(apitest.Request{Method: "GET", Path: "/v2/events" + query, Bearer: bearer}).Expect(200).Decode(&page)
	return page.Data
}

func key(k string) http.Header { return http.Header{"Idempotency-Key": {k}} }

// TestExactlyOneEventPerCommittedChange: a keyed create, its replay, a 422 reuse of
// its key, a refused (400) write and a write whose commit failed after its event was
// written produce exactly one risk.created; PATCH and DELETE one event each. Every
// event reaches the subscribed endpoint on loopback, each webhook-id once, and
// verifies with the independent Standard Webhooks library.
func TestExactlyOneEventPerCommittedChange(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate)
	a := env.Tenant("Acme")
	tok := login(t, env, a)
	rcv := webhooktest.NewReceiver(t)
	ep := createEndpoint(t, env, tok, rcv.URL()+"/riskapi")
	start(t, env)

	create := apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Header: key("create-once-1"), JSON: map[string]any{"title": "DPA"}}
	var r struct{ ID string }
	first := env.Do(create).Expect(201)
	first.Decode(&r)
	requestID := first.Header().Get("X-Request-Id")
	if env.Do(create).Expect(201).Header().Get("Idempotent-Replayed") != "true" {
		t.Fatal("second send was not a replay")
	}
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Header: key("create-once-1"),
		JSON: map[string]any{"title": "another"}}).ExpectProblem(422, "IDEMPOTENCY_KEY_REUSED")
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": ""}}).
		ExpectProblem(400, "VALIDATION_FAILED")
	undo := apitest.FailCompleting(t, env.App.DB, "rolled-back-1")
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Header: key("rolled-back-1"),
		JSON: map[string]any{"title": "never"}}).ExpectProblem(503, "STORE_UNAVAILABLE")
	undo()
	env.Do(apitest.Request{Method: "PATCH", Path: "/v2/risks/" + r.ID, Bearer: a.Key, JSON: map[string]any{"status": "mitigated"}}).Expect(200)
	env.Do(apitest.Request{Method: "DELETE", Path: "/v2/risks/" + r.ID, Bearer: a.Key, Header: key("delete-once-1")}).Expect(204)
	env.Do(apitest.Request{Method: "DELETE", Path: "/v2/risks/" + r.ID, Bearer: a.Key, Header: key("delete-once-1")}).Expect(204)

	evs := listEvents(t, env, a.Key, "")
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
		if e.Data.Object["id"] != r.ID {
			t.Errorf("%s is about %v, want %s", e.Type, e.Data.Object["id"], r.ID)
		}
	}
	if want := []string{"risk.deleted", "risk.updated", "risk.created"}; !slices.Equal(types, want) {
		t.Fatalf("events newest first: %v, want %v", types, want)
	}
	created := evs[2]
	if created.Request.IdempotencyKey == nil || *created.Request.IdempotencyKey != "create-once-1" ||
		created.Request.ID == nil || *created.Request.ID != requestID || created.Data.Object["title"] != "DPA" {
		t.Fatalf("risk.created carries %+v, want the request id %s and key create-once-1", created, requestID)
	}
	if evs[1].Request.IdempotencyKey != nil || evs[1].Data.Object["status"] != "mitigated" {
		t.Fatalf("risk.updated: %+v", evs[1])
	}
	if evs[0].Data.Object["title"] != "DPA" {
		t.Fatalf("risk.deleted should carry the risk as it was: %+v", evs[0].Data.Object)
	}

	ids := rcv.WaitIDs(t, 3, 15*time.Second)
	time.Sleep(200 * time.Millisecond)
	for _, e := range evs {
		if n := rcv.IDs()[e.ID]; n != 1 {
			t.Errorf("%s (%s) delivered %d times, want once", e.ID, e.Type, n)
		}
	}
	if len(ids) != 3 {
		t.Fatalf("receiver got %d events, want 3: %v", len(ids), ids)
	}
	for _, d := range rcv.Deliveries() {
		got := env.Do(apitest.Request{Method: "GET", Path: "/v2/events/" + d.ID(), Bearer: a.Key}).Expect(200)
		if got.Body.String() != string(d.Body) {
			t.Errorf("delivered %s, but GET /v2/events/%s is %s", d.Body, d.ID(), got.Body)
		}
	}
	webhooktest.VerifyWithNode(t, ep.Secret, rcv.Deliveries())

	// The worker records an attempt just after the receiver answered it.
	for _, want := range []string{`riskapi_events_emitted_total{type="risk.created"} 1`, `riskapi_events_emitted_total{type="risk.deleted"} 1`,
		`riskapi_webhook_deliveries_total{outcome="delivered"} 3`, `riskapi_webhook_delivery_lag_seconds_count 3`} {
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(env.Do(apitest.Request{Method: "GET", Path: "/metrics"}).Expect(200).Body.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("/metrics lacks %q", want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// A redelivery sends the event again under the same webhook-id.
	env.Do(apitest.Request{Method: "POST", Path: "/v1/events/" + created.ID + "/redeliver", Bearer: tok}).Expect(202)
	deadline := time.Now().Add(15 * time.Second)
	for rcv.IDs()[created.ID] != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("redelivered event arrived %d times, want 2", rcv.IDs()[created.ID])
		}
		time.Sleep(20 * time.Millisecond)
	}
	webhooktest.VerifyWithNode(t, ep.Secret, rcv.Deliveries())
}

// TestInboundWebhookChangesEmit: a risk created or changed by an inbound webhook
// delivery emits risk.created / risk.updated once, and its redelivery nothing.
func TestInboundWebhookChangesEmit(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	src, err := env.App.Webhooks.CreateSource(context.Background(), a.ID, "scanner")
	if err != nil {
		t.Fatal(err)
	}
	send := func(body string) {
		t.Helper()
		env.Do(apitest.Request{Method: "POST", Path: "/webhooks/inbound/scanner", Body: body, Header: http.Header{
			"Webhook-Signature": {webhooks.Sign(src.Secret, time.Now(), []byte(body))}}}).Expect(200)
	}
	created := `{"id":"f-1","type":"finding.created","data":{"externalId":"x-1","title":"Open S3 bucket"}}`
	send(created)
	send(created)
	send(`{"id":"f-2","type":"finding.updated","data":{"externalId":"x-1","impact":5}}`)
	// A finding that changes nothing is no change: no event.
	send(`{"id":"f-3","type":"finding.updated","data":{"externalId":"x-1","impact":5,"title":"Open S3 bucket"}}`)
	evs := listEvents(t, env, a.Key, "")
	if len(evs) != 2 || evs[0].Type != "risk.updated" || evs[1].Type != "risk.created" ||
		evs[1].Data.Object["title"] != "Open S3 bucket" || evs[0].Data.Object["impact"] != float64(5) {
		t.Fatalf("events %+v, want risk.created then risk.updated", evs)
	}
	if want := map[string]any{"impact": nil}; !maps.Equal(evs[0].Data.PreviousAttributes, want) {
		t.Errorf("risk.updated previousAttributes = %v, want %v", evs[0].Data.PreviousAttributes, want)
	}
	if evs[1].Data.PreviousAttributes != nil {
		t.Errorf("risk.created carries previousAttributes %v", evs[1].Data.PreviousAttributes)
	}
}

// TestEndpointManagement: the secret is shown once; listing never shows it; an
// Idempotency-Key is refused before anything is created; loopback URLs are refused
// without WEBHOOK_ALLOW_PRIVATE; the delivery log and redelivery work; deleting an
// endpoint stops deliveries; another tenant sees none of it.
func TestEndpointManagement(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.Tenant("Acme"), env.Tenant("Globex")
	tok, tokB := login(t, env, a), login(t, env, b)
	env.Do(apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints", Bearer: tok,
		JSON: map[string]any{"url": "http://127.0.0.1:9/x"}}).ExpectProblem(400, "VALIDATION_FAILED")
	env.Do(apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints", Bearer: tok, Header: key("endpoint-key-1"),
		JSON: map[string]any{"url": "https://93.184.216.34/x"}}).ExpectProblem(422, "IDEMPOTENCY_UNSUPPORTED_ROUTE")
	env.Do(apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints", Bearer: tok,
		JSON: map[string]any{"url": "https://93.184.216.34/x", "events": []string{"risk.exploded"}}}).ExpectProblem(400, "VALIDATION_FAILED")
	// A bad URL and bad event types are named in one answer, each unknown type by its name.
	var refused struct {
		Errors []struct{ Field, Detail string }
	}
	env.Do(apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints", Bearer: tok,
		JSON: map[string]any{"url": "ftp://x", "events": []string{"risk.create", "risk.deleted", "nope"}}}).
		ExpectProblem(400, "VALIDATION_FAILED").Decode(&refused)
	if len(refused.Errors) != 2 || refused.Errors[0].Field != "url" || refused.Errors[1].Field != "events" ||
		!strings.Contains(refused.Errors[1].Detail, `"risk.create", "nope"`) {
		t.Errorf("bad url and events: %+v, want both named, the unknown types by name", refused.Errors)
	}
	ep := createEndpoint(t, env, tok, "https://93.184.216.34/hook", "risk.created", "risk.deleted")
	if len(ep.Secret) < 40 || ep.Secret[:6] != "whsec_" || !slices.Equal(ep.Events, []string{"risk.created", "risk.deleted"}) {
		t.Fatalf("created endpoint %+v", ep)
	}
	list := env.Do(apitest.Request{Method: "GET", Path: "/v1/webhook-endpoints", Bearer: tok}).Expect(200)
	var page struct{ Data []map[string]any }
	list.Decode(&page)
	if len(page.Data) != 1 || page.Data[0]["secret"] != nil || page.Data[0]["id"] != ep.ID {
		t.Fatalf("list %s: want one endpoint, no secret", list.Body)
	}
	if n := len(listEndpoints(t, env, tokB)); n != 0 {
		t.Fatalf("another tenant lists %d endpoints", n)
	}
	env.Do(apitest.Request{Method: "GET", Path: "/v1/webhook-endpoints/" + ep.ID + "/deliveries", Bearer: tokB}).ExpectProblem(404, "NOT_FOUND")
	env.Do(apitest.Request{Method: "DELETE", Path: "/v1/webhook-endpoints/" + ep.ID, Bearer: tokB}).ExpectProblem(404, "NOT_FOUND")
	// API keys do not manage endpoints: the routes are /v1 only.
	env.Do(apitest.Request{Method: "GET", Path: "/v2/webhook-endpoints", Bearer: a.Key}).Expect(404)

	var r struct{ ID string }
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "t"}}).Expect(201).Decode(&r)
	evs := listEvents(t, env, a.Key, "?type=risk.created")
	if len(evs) != 1 {
		t.Fatalf("%d risk.created events", len(evs))
	}
	env.Do(apitest.Request{Method: "GET", Path: "/v2/events/" + evs[0].ID, Bearer: b.Key}).ExpectProblem(404, "NOT_FOUND")
	env.Do(apitest.Request{Method: "POST", Path: "/v1/events/" + evs[0].ID + "/redeliver", Bearer: tokB}).ExpectProblem(404, "NOT_FOUND")
	var re struct{ Deliveries int }
	env.Do(apitest.Request{Method: "POST", Path: "/v1/events/" + evs[0].ID + "/redeliver", Bearer: tok}).Expect(202).Decode(&re)
	if re.Deliveries != 1 {
		t.Fatalf("redelivery queued %d deliveries, want 1", re.Deliveries)
	}
	env.Do(apitest.Request{Method: "GET", Path: "/v2/events?type=nope", Bearer: a.Key}).ExpectProblem(400, "VALIDATION_FAILED")
	env.Do(apitest.Request{Method: "DELETE", Path: "/v1/webhook-endpoints/" + ep.ID, Bearer: tok}).Expect(204)
	if n := len(listEndpoints(t, env, tok)); n != 0 {
		t.Fatalf("%d endpoints after delete", n)
	}
	env.Do(apitest.Request{Method: "GET", Path: "/v1/webhook-endpoints/" + ep.ID + "/deliveries", Bearer: tok}).ExpectProblem(404, "NOT_FOUND")
}

func listEndpoints(t *testing.T, env *apitest.Env, tok string) []map[string]any {
	t.Helper()
	var page struct{ Data []map[string]any }
	env.Do(apitest.Request{Method: "GET", Path: "/v1/webhook-endpoints", Bearer: tok}).Expect(200).Decode(&page)
	return page.Data
}

// TestEventsReadScope: /v2/events needs events:read; keys created without it keep
// working for risks and get 403 here.
func TestEventsReadScope(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	_, risksOnly, err := env.App.Tenants.CreateAPIKey(context.Background(), a.ID, "old",
		[]tenants.Scope{tenants.ScopeRisksRead, tenants.ScopeRisksWrite})
	if err != nil {
		t.Fatal(err)
	}
	env.Do(apitest.Request{Method: "GET", Path: "/v2/events", Bearer: risksOnly}).ExpectProblem(403, "FORBIDDEN")
	env.Do(apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: risksOnly}).Expect(200)
	env.Do(apitest.Request{Method: "GET", Path: "/v2/events", Bearer: a.Key}).Expect(200)
	env.Do(apitest.Request{Method: "GET", Path: "/v1/events", Bearer: login(t, env, a)}).Expect(200)
}

// TestEventListPagesAndSweep: events page newest first across cursors; the sweep
// deletes those older than EVENT_TTL.
func TestEventListPagesAndSweep(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *config.Config) { c.Sweep.EventTTL = time.Hour })
	a := env.Tenant("Acme")
	var want []string
	for i := 0; i < 5; i++ {
		var r struct{ ID string }
		env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": fmt.Sprint(i)}}).Expect(201).Decode(&r)
		want = append([]string{r.ID}, want...)
	}
	var got []string
	path := "/v2/events?limit=2"
	for {
		var page struct {
			Data       []event
			HasMore    bool
			NextCursor *string
		}
		env.Do(apitest.Request{Method: "GET", Path: path, Bearer: a.Key}).Expect(200).Decode(&page)
		for _, e := range page.Data {
			got = append(got, e.Data.Object["id"].(string))
		}
		if !page.HasMore {
			break
		}
		path = "/v2/events?limit=2&cursor=" + *page.NextCursor
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged events about %v, want newest first %v", got, want)
	}
	env.Clock.Advance(2 * time.Hour)
	if n, err := env.App.EventSweeper.Sweep(context.Background()); err != nil || n != 5 {
		t.Fatalf("sweep deleted %d (%v), want 5", n, err)
	}
	if evs := listEvents(t, env, a.Key, ""); len(evs) != 0 {
		t.Fatalf("%d events after the sweep", len(evs))
	}
}

// TestAttachmentCreatedEmits: an upload emits one attachment.created carrying the
// attachment; its replay emits nothing.
func TestAttachmentCreatedEmits(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	var r struct{ ID string }
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "t"}}).Expect(201).Decode(&r)
	form, ct := apitest.Multipart("", apitest.FilePart("file", "dpa.pdf", "application/pdf", "%PDF-1.4"))
	up := apitest.Request{Method: "POST", Path: "/v2/risks/" + r.ID + "/attachments", Bearer: a.Key, Body: string(form),
		Header: http.Header{"Content-Type": {ct}, "Idempotency-Key": {"upload-once-1"}}}
	var att struct{ ID string }
	env.Do(up).Expect(201).Decode(&att)
	env.Do(up).Expect(201)
	evs := listEvents(t, env, a.Key, "?type=attachment.created")
	if len(evs) != 1 || evs[0].Data.Object["id"] != att.ID || evs[0].Data.Object["riskId"] != r.ID ||
		evs[0].Data.Object["filename"] != "dpa.pdf" {
		t.Fatalf("attachment.created events %+v, want one for %s", evs, att.ID)
	}
}

// TestMembersReadEventsButManageNoEndpoints: a member reads events; managing
// endpoints, their log and redeliveries is for admins (403 FORBIDDEN).
func TestMembersReadEventsButManageNoEndpoints(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	admin, member := env.User(a.ID, tenants.RoleAdmin).Token, env.User(a.ID, tenants.RoleMember).Token
	env.Do(apitest.Request{Method: "POST", Path: "/v1/risks", Bearer: member, JSON: map[string]any{"title": "t"}}).Expect(201)
	evs := listEvents(t, env, a.Key, "")
	if len(evs) != 1 {
		t.Fatalf("%d events", len(evs))
	}
	env.Do(apitest.Request{Method: "GET", Path: "/v1/events", Bearer: member}).Expect(200)
	env.Do(apitest.Request{Method: "GET", Path: "/v1/events/" + evs[0].ID, Bearer: member}).Expect(200)
	ep := createEndpoint(t, env, admin, "https://93.184.216.34/hook")
	for _, r := range []apitest.Request{
		{Method: "POST", Path: "/v1/webhook-endpoints", JSON: map[string]any{"url": "https://93.184.216.34/x"}},
		{Method: "GET", Path: "/v1/webhook-endpoints"},
		{Method: "DELETE", Path: "/v1/webhook-endpoints/" + ep.ID},
		{Method: "GET", Path: "/v1/webhook-endpoints/" + ep.ID + "/deliveries"},
		{Method: "POST", Path: "/v1/events/" + evs[0].ID + "/redeliver"},
	} {
		r.Bearer = member
		env.Do(r).ExpectProblem(403, "FORBIDDEN")
	}
	if n := len(listEndpoints(t, env, admin)); n != 1 {
		t.Fatalf("%d endpoints after a member's attempts, want the admin's one", n)
	}
}
