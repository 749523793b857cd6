package tracing_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/app"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/events/delivery"
	"github.com/riskapi/riskapi/internal/events/webhooktest"
	"github.com/riskapi/riskapi/internal/tracing"
)

// tracedEnv is a server tracing into an in-memory exporter, which sees each span as
// it ends, as a collector would (redaction included).
func tracedEnv(t *testing.T, mods ...func(*config.Config)) (*apitest.Env, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	mods = append(mods, func(c *config.Config) { c.Tracing.Endpoint = "http://collector.invalid:4318" })
	return apitest.NewWith(t, app.Options{Tracing: tracing.Options{Exporter: exp}}, mods...), exp
}

// TestWebhookURLNotInSpans: a delivery to an endpoint whose URL carries a secret in
// its path and query (a chat tool's, a signed URL) leaves none of it in any span: the
// POST span's url.full is the endpoint's origin.
func TestWebhookURLNotInSpans(t *testing.T) {
	t.Parallel()
	hook := webhooktest.NewReceiver(t)
	env, exp := tracedEnv(t, func(c *config.Config) { c.Outbound.AllowPrivate = true })
	w := env.App.Events.Worker
	w.Poll, w.Backoff = 20*time.Millisecond, delivery.Backoff{Base: 50 * time.Millisecond, Max: 200 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	a := env.Tenant("Hooked")
	tok := apitest.Login(t, env, a).Token
	const pathSecret, querySecret = "T0PATHSECRET", "s3cr3tQUERY"
	env.Do(apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints", Bearer: tok,
		JSON: map[string]any{"url": hook.URL() + "/services/" + pathSecret + "?token=" + querySecret + "&sig=abc",
			"events": []string{"risk.created"}}}).Expect(201)
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key,
		JSON: map[string]any{"title": "Hooked risk", "likelihood": 2, "impact": 3}}).Expect(201)
	if got := hook.WaitIDs(t, 1, 10*time.Second); len(got) != 1 {
		t.Fatalf("deliveries = %v, want one", got)
	}

	var post *tracetest.SpanStub
	for deadline := time.Now().Add(10 * time.Second); post == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, s := range exp.GetSpans() {
			if s.Name == "POST" {
				post = &s
			}
		}
	}
	if post == nil {
		t.Fatalf("no delivery POST span among %v", spanNames(exp.GetSpans()))
	}
	if got, want := valueOf(post.Attributes, "url.full"), hook.URL(); got != want {
		t.Errorf("the POST span's url.full = %q, want the endpoint's origin %q", got, want)
	}
	for _, s := range exp.GetSpans() {
		for _, kv := range s.Attributes {
			if v := kv.Value.Emit(); strings.Contains(v, pathSecret) || strings.Contains(v, querySecret) {
				t.Errorf("span %q carries the endpoint URL's secret in %s = %q", s.Name, kv.Key, v)
			}
		}
		if strings.Contains(s.Status.Description, querySecret) || strings.Contains(s.Status.Description, pathSecret) {
			t.Errorf("span %q's status carries the endpoint URL's secret: %q", s.Name, s.Status.Description)
		}
	}
}

// TestReplayMarkedOnSpan: the span of a keyed request says what the idempotency
// engine did with it; a replay is marked as one, the first execution is not.
func TestReplayMarkedOnSpan(t *testing.T) {
	t.Parallel()
	env, exp := tracedEnv(t)
	a := env.Tenant("Replayed")
	req := apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key,
		Header: http.Header{"Idempotency-Key": {"replay-me-1"}},
		JSON:   map[string]any{"title": "Once only", "likelihood": 2, "impact": 3}}
	env.Do(req).Expect(201)
	if got := env.Do(req).Expect(201).Header().Get("Idempotent-Replayed"); got != "true" {
		t.Fatalf("second response Idempotent-Replayed = %q, want a replay", got)
	}
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key,
		JSON: map[string]any{"title": "Unkeyed", "likelihood": 2, "impact": 3}}).Expect(201)

	var got [][2]string
	for _, s := range exp.GetSpans() {
		if s.Name == "POST /v2/risks" {
			got = append(got, [2]string{valueOf(s.Attributes, "riskapi.idempotency.outcome"), valueOf(s.Attributes, "riskapi.idempotency.replayed")})
		}
	}
	want := [][2]string{{"executed", "false"}, {"replayed", "true"}, {"", ""}}
	if len(got) != len(want) {
		t.Fatalf("POST /v2/risks spans (outcome, replayed) = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("span %d (outcome, replayed) = %v, want %v", i, got[i], want[i])
		}
	}
}

// TestProbesNotTraced: health checks and the metrics scrape make no span (a
// container's health check would otherwise be a trace every few seconds); other
// unauthenticated requests still do.
func TestProbesNotTraced(t *testing.T) {
	t.Parallel()
	env, exp := tracedEnv(t)
	for _, r := range []apitest.Request{{Method: "GET", Path: "/healthz"}, {Method: "HEAD", Path: "/healthz"},
		{Method: "GET", Path: "/readyz"}, {Method: "GET", Path: "/metrics"}} {
		if res := env.Do(r); res.Code != http.StatusOK {
			t.Fatalf("%s %s = %d", r.Method, r.Path, res.Code)
		}
	}
	if spans := exp.GetSpans(); len(spans) != 0 {
		t.Errorf("probes made spans: %v", spanNames(spans))
	}
	env.Do(apitest.Request{Method: "POST", Path: "/v1/sessions", JSON: map[string]any{"email": "nobody@example.com", "password": "wrong-password"}})
	if names := spanNames(exp.GetSpans()); !slices.Contains(names, "POST /v1/sessions") {
		t.Errorf("a sign-in made no span; spans: %v", names)
	}
}

func spanNames(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// valueOf is the attribute key's value as text, "" when absent.
func valueOf(attrs []attribute.KeyValue, key string) string {
	for _, kv := range attrs {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// TestHeadServedWhenTraced: with tracing on, HEAD is still served as the GET of its
// route (the request span wraps the request without hiding the method change from
// the router), and it is traced.
func TestHeadServedWhenTraced(t *testing.T) {
	t.Parallel()
	env, exp := tracedEnv(t)
	a := env.Tenant("Headed")
	var r struct{ ID string }
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key,
		JSON: map[string]any{"title": "Read by HEAD", "likelihood": 2, "impact": 3}}).Expect(201).Decode(&r)
	res := env.Do(apitest.Request{Method: "HEAD", Path: "/v2/risks/" + r.ID, Bearer: a.Key})
	if res.Code != http.StatusOK || res.Body.Len() != 0 || res.Header().Get("ETag") == "" {
		t.Fatalf("HEAD = %d, %d body bytes, ETag %q; want 200, no body, an ETag", res.Code, res.Body.Len(), res.Header().Get("ETag"))
	}
	var head int
	for _, s := range exp.GetSpans() {
		if valueOf(s.Attributes, "http.request.method") == "HEAD" && valueOf(s.Attributes, "http.route") == "/v2/risks/:id" {
			head++
		}
	}
	if head != 1 {
		t.Errorf("HEAD spans of the risk's route: %d, want 1; spans: %v", head, spanNames(exp.GetSpans()))
	}
}
