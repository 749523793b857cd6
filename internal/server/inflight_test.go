package server

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/problem"
)

// A tenant's costly reads beyond Max are refused at once with 429
// CONCURRENCY_LIMITED and Retry-After, while its other requests and every other
// tenant's costly reads go through; its slots come back when its reads end.
func TestInflightLimitsEachTenantsCostlyReads(t *testing.T) {
	t.Parallel()
	const max = 8
	release := make(chan struct{})
	started := make(chan struct{}, 64)
	e := echo.New()
	e.HTTPErrorHandler = errorHandler(slog.Default())
	limit, err := InflightConfig{Max: max,
		Key:     func(c echo.Context) (string, error) { return c.Request().Header.Get("Tenant"), nil },
		Skipper: func(c echo.Context) bool { return c.QueryParam("costly") == "" },
	}.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	e.GET("/read", func(c echo.Context) error {
		started <- struct{}{}
		if c.QueryParam("hold") != "" {
			<-release
		}
		return c.NoContent(http.StatusNoContent)
	}, limit)
	do := func(tenant, query string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/read?"+query, nil)
		req.Header.Set("Tenant", tenant)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec
	}

	// Tenant A fills its slots with costly reads held in flight.
	var held sync.WaitGroup
	for range max {
		held.Add(1)
		go func() {
			defer held.Done()
			if rec := do("A", "costly=1&hold=1"); rec.Code != http.StatusNoContent {
				t.Errorf("held read: %d", rec.Code)
			}
		}()
	}
	for range max {
		<-started
	}
	// Many more of A's costly reads at once: every one refused, none run.
	var refused sync.WaitGroup
	for range 32 {
		refused.Add(1)
		go func() {
			defer refused.Done()
			rec := do("A", "costly=1")
			if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" {
				t.Errorf("A's costly read past its share: %d Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
			}
			if p := rec.Body.String(); !strings.Contains(p, string(problem.ConcurrencyLimited)) {
				t.Errorf("body %s", p)
			}
		}()
	}
	refused.Wait()
	if len(started) != 0 {
		t.Fatalf("%d refused reads ran", len(started))
	}
	// A's ordinary reads and B's costly ones keep their capacity.
	if rec := do("A", ""); rec.Code != http.StatusNoContent {
		t.Errorf("A's plain read: %d", rec.Code)
	}
	for range max {
		if rec := do("B", "costly=1"); rec.Code != http.StatusNoContent {
			t.Errorf("B's costly read: %d", rec.Code)
		}
	}
	close(release)
	held.Wait()
	for len(started) > 0 {
		<-started
	}
	if rec := do("A", "costly=1"); rec.Code != http.StatusNoContent {
		t.Errorf("A's costly read once its reads ended: %d", rec.Code)
	}
}
