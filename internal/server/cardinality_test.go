package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
)

// TestMetricsLabelsAreBounded: whatever methods and paths a client makes up, /metrics
// gains one series for "other" methods and one for unmatched routes, never one per
// request, and never the client's text (issue: 1,000 made-up methods made 1,000 series;
// a 500 KB method name went into /metrics as is).
func TestMetricsLabelsAreBounded(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	long := strings.Repeat("X", 64<<10)
	for i := range 50 {
		env.Do(apitest.Request{Method: fmt.Sprintf("BREW%d", i), Path: "/v2/risks", Bearer: a.Key})
		env.Do(apitest.Request{Method: fmt.Sprintf("PROPFIND%d", i), Path: fmt.Sprintf("/made/up/%d", i)})
		env.Do(apitest.Request{Method: "GET", Path: fmt.Sprintf("/v2/nothing-%d", i), Bearer: a.Key})
	}
	env.Do(apitest.Request{Method: long, Path: "/" + long})

	metrics := apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/metrics"}).Expect(200).Body.String()
	if strings.Contains(metrics, "BREW") || strings.Contains(metrics, "PROPFIND") || strings.Contains(metrics, "XXXX") ||
		strings.Contains(metrics, "nothing-") || strings.Contains(metrics, "/made/up") {
		t.Fatalf("/metrics carries client-chosen methods or paths as labels")
	}
	var series int
	for _, line := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(line, "riskapi_http_requests_total{") {
			series++
		}
	}
	// GET /metrics itself, other×/v2/risks (405), other×unmatched, GET×unmatched.
	if series > 4 {
		t.Errorf("%d request-count series after 151 made-up requests, want at most 4:\n%s", series, metrics)
	}
	for _, want := range []string{`method="other",route="unmatched"`, `method="GET",route="unmatched"`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks a series with %s", want)
		}
	}
}
