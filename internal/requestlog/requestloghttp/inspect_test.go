package requestloghttp_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
)

// TestInspectorFollowsAKey: a slow keyed create (held in flight by a lock on its
// table) shows as processing, with nothing settled yet; once it commits, complete
// with its status, its times and the id of the request that ran it; a rolled-back
// attempt shows as failed; an unknown key and, after the TTL, every key are 404.
func TestInspectorFollowsAKey(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	release := holdRiskWrites(t, env)
	slow := make(chan *apitest.Response)
	go func() {
		slow <- env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key,
			JSON: map[string]any{"title": "slow"}, Header: http.Header{"Idempotency-Key": {"inspect-key-1"}}})
	}()
	k := waitProcessing(t, env, a.Key, "inspect-key-1", "/v2/risks")
	if k.StatusCode != nil || k.RequestID != nil || k.CreatedAt != nil || k.Key != "inspect-key-1" || k.Method != "POST" || k.Path != "/v2/risks" {
		t.Errorf("processing: %+v, want nothing settled", k)
	}
	// Still processing: the inspector took nothing the request needs.
	select {
	case res := <-slow:
		t.Fatalf("the slow request ended while its table was locked: %d %s", res.Code, res.Body)
	default:
	}
	release()
	res := <-slow
	res.T = t
	res.Expect(http.StatusCreated)

	before := time.Now()
	inspect(t, env, a.Key, "inspect-key-1", "POST", "/v2/risks").Expect(http.StatusOK).Decode(&k)
	if k.State != "complete" || k.StatusCode == nil || *k.StatusCode != 201 || k.RequestID == nil ||
		*k.RequestID != res.Header().Get("X-Request-Id") || k.CreatedAt == nil || k.ExpiresAt == nil ||
		k.ExpiresAt.Sub(*k.CreatedAt) != 24*time.Hour || k.CreatedAt.After(before) {
		t.Errorf("after the commit: %+v (request id %s), want complete, 201, its request id, a 24h TTL",
			k, res.Header().Get("X-Request-Id"))
	}
	// /v1 and a lowercase method see the same record.
	session := login(t, env, a)
	apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/v1/idempotency-keys/inspect-key-1?method=post&path=/v2/risks", Bearer: session}).
		Expect(http.StatusOK)

	failed := apitest.Do(t, env, apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": ""},
		Header: http.Header{"Idempotency-Key": {"inspect-key-2"}}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	inspect(t, env, a.Key, "inspect-key-2", "POST", "/v2/risks").Expect(http.StatusOK).Decode(&k)
	if k.State != "failed" || k.RequestID == nil || *k.RequestID != failed.Header().Get("X-Request-Id") {
		t.Errorf("after a rolled-back attempt: %+v, want failed with its request id", k)
	}

	inspect(t, env, a.Key, "never-used-key", "POST", "/v2/risks").ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	inspect(t, env, a.Key, "inspect-key-1", "PATCH", "/v2/risks").ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	inspect(t, env, a.Key, "inspect-key-1", "POST", "/v1/risks").ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	inspect(t, env, a.Key, "inspect-key-1", "GET", "/v2/risks").ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	inspect(t, env, a.Key, "inspect-key-1", "POST", "v2/risks").ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	// Left out, method and path are each "required", not merely wrong.
	for _, c := range []struct{ method, path, field string }{{"", "/v2/risks", "method"}, {"POST", "", "path"}} {
		if d := inspect(t, env, a.Key, "inspect-key-1", c.method, c.path).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED").Map()["detail"]; !strings.Contains(fmt.Sprint(d), c.field+": is required") {
			t.Errorf("without %s: detail %v, want it to say %s is required", c.field, d, c.field)
		}
	}
	inspect(t, env, a.Key, "bad", "POST", "/v2/risks").ExpectProblem(http.StatusNotFound, "NOT_FOUND")

	env.Clock.Advance(24*time.Hour + time.Second)
	inspect(t, env, a.Key, "inspect-key-1", "POST", "/v2/risks").ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	inspect(t, env, a.Key, "inspect-key-2", "POST", "/v2/risks").ExpectProblem(http.StatusNotFound, "NOT_FOUND")
}
