package requestloghttp_test

import (
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
)

// TestRequestLogOff: an instance with REQUEST_LOG=off logs none of its requests — a
// keyed create, a failed keyed write, a read — while what an instance with the log
// on stored stays listable through it, and its key inspector still follows both keys.
func TestRequestLogOff(t *testing.T) {
	t.Parallel()
	on := apitest.New(t)
	a := on.Tenant("Acme")
	logged := apitest.Do(t, on, apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key,
		JSON: map[string]any{"title": "logged"}}).Expect(http.StatusCreated)
	flush(t, on)

	off := on.Twin(func(c *config.Config) { c.HTTP.RequestLog = false })
	created := apitest.Do(t, off, apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key,
		JSON: map[string]any{"title": "unlogged"}, Header: http.Header{"Idempotency-Key": {"off-key-1"}}}).Expect(http.StatusCreated)
	failed := apitest.Do(t, off, apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key,
		JSON: map[string]any{"title": ""}, Header: http.Header{"Idempotency-Key": {"off-key-2"}}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	apitest.Do(t, off, apitest.Request{Method: http.MethodGet, Path: "/v2/risks", Bearer: a.Key}).Expect(http.StatusOK)

	var k keyState
	inspect(t, off, a.Key, "off-key-1", "POST", "/v2/risks").Expect(http.StatusOK).Decode(&k)
	if k.State != "complete" || k.RequestID == nil || *k.RequestID != created.Header().Get("X-Request-Id") {
		t.Errorf("inspector with the log off, after a keyed create: %+v, want complete with its request id", k)
	}
	inspect(t, off, a.Key, "off-key-2", "POST", "/v2/risks").Expect(http.StatusOK).Decode(&k)
	if k.State != "failed" || k.RequestID == nil || *k.RequestID != failed.Header().Get("X-Request-Id") {
		t.Errorf("inspector with the log off, after a failed write: %+v, want failed with its request id", k)
	}

	all := list(t, off, a.Key, "")
	if len(all) != 1 || all[0].ID != logged.Header().Get("X-Request-Id") {
		ids := make([]string, len(all))
		for i, e := range all {
			ids[i] = e.Method + " " + e.Path
		}
		t.Errorf("with the log off the log holds %v, want only the request the instance with the log on served", ids)
	}
}
