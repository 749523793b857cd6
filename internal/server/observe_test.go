package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/apitest"
)

// TestMetricsAndLogs: /metrics counts requests and their latency by route (the
// pattern, not the path) and status; each request logs one structured line under its
// request id, and no credential, password or body ever reaches the log.
func TestMetricsAndLogs(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	tok := apitest.Login(t, env, a).Token
	var r struct{ ID string }
	apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key,
		JSON: map[string]any{"title": "body-secret-title"}}).Expect(201).Decode(&r)
	get := apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks/" + r.ID, Bearer: a.Key}).Expect(200)
	missing := apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks/risk_0193b2c4d5e67f8091a2b3c4d5e6f708", Bearer: a.Key}).Expect(404)
	bad := apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks?limit=0", Bearer: a.Key}).Expect(400)
	apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v1/risks", Bearer: tok}).Expect(200)
	apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/no/such/route"}).Expect(404)

	metrics := apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/metrics"}).Expect(200).Body.String()
	for _, want := range []string{
		`riskapi_http_requests_total{method="POST",route="/v2/risks",status="201"} 1`,
		`riskapi_http_requests_total{method="GET",route="/v2/risks/:id",status="200"} 1`,
		`riskapi_http_requests_total{method="GET",route="/v2/risks/:id",status="404"} 1`,
		`riskapi_http_requests_total{method="GET",route="/v1/risks",status="200"} 1`,
		`riskapi_http_requests_total{method="POST",route="/v1/sessions",status="201"} 1`,
		`riskapi_http_request_duration_seconds_count{method="GET",route="/v2/risks/:id",status="200"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(metrics, r.ID) || strings.Contains(metrics, "/no/such/route") {
		t.Errorf("/metrics labels carry raw paths (unbounded cardinality)")
	}

	logs := env.Logs.String()
	for _, secret := range []string{a.Key, a.Key[3:], tok, a.Password, "body-secret-title"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log contains a secret or a body: %q", secret)
		}
	}
	rid := get.Header().Get(echo.HeaderXRequestID)
	// Each line says who asked (tenant and credential ids), how long it took in
	// milliseconds, and for a problem its code: two 4xx read differently.
	wantCode := map[string]string{rid: "", missing.Header().Get(echo.HeaderXRequestID): "NOT_FOUND",
		bad.Header().Get(echo.HeaderXRequestID): "VALIDATION_FAILED"}
	var lines int
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if code, ok := wantCode[fmt.Sprint(rec["requestId"])]; ok {
			if rec["tenant"] != a.ID || rec["credential"] != a.KeyID || (code == "" && rec["code"] != nil) || (code != "" && rec["code"] != code) {
				t.Errorf("log line %v, want tenant %s, credential %s and code %q", rec, a.ID, a.KeyID, code)
			}
			if ms, ok := rec["durationMs"].(float64); !ok || ms < 0 {
				t.Errorf("log line %v lacks durationMs", rec)
			}
		}
		if rec["requestId"] == rid {
			lines++
			if rec["route"] != "/v2/risks/:id" || rec["status"] != 200.0 || rec["method"] != "GET" {
				t.Errorf("request log line %v, want route, method and status", rec)
			}
		}
	}
	if lines != 1 {
		t.Errorf("%d log lines carry request id %s, want 1", lines, rid)
	}
}

// TestKeyedRequestLogsOneLine: a keyed write and its replay each log exactly one
// line under their request id, and that line names what the idempotency engine did
// (executed, then replayed): an operator finds a keyed request's outcome on its
// access line, not on a second line to join it with.
func TestKeyedRequestLogsOneLine(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	send := func() string {
		res := apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key,
			Header: http.Header{"Idempotency-Key": {"log-line-key-1"}}, JSON: map[string]any{"title": "t"}}).Expect(201)
		return res.Header().Get(echo.HeaderXRequestID)
	}
	want := map[string]string{send(): "executed", send(): "replayed"}
	got := map[string][]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(env.Logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if rid, _ := rec["requestId"].(string); want[rid] != "" {
			got[rid] = append(got[rid], rec)
		}
	}
	for rid, outcome := range want {
		lines := got[rid]
		if len(lines) != 1 {
			t.Errorf("%d log lines carry request id %s, want 1: %v", len(lines), rid, lines)
			continue
		}
		if lines[0]["msg"] != "request" || lines[0]["idempotency"] != outcome || lines[0]["status"] != 201.0 {
			t.Errorf("log line of %s = %v, want the access line with idempotency %q", rid, lines[0], outcome)
		}
	}
}
