package server

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/problem"
)

// With the instance's costly reads bounded (INSTANCE_MAX_COSTLY), A's costly reads
// beyond the bound wait rather than run; B's costly read, arriving after all of
// them, runs at the next free slot (B has none running, A has); A's and B's plain
// requests never wait; and a read that waits past Wait is refused 429.
func TestInstanceBoundGivesTheNextTurnToTheTenantWithFewestRunning(t *testing.T) {
	t.Parallel()
	const running = 2
	release := make(chan struct{}, 64)
	started := make(chan string, 64)
	e := echo.New()
	e.HTTPErrorHandler = errorHandler(slog.Default())
	limit, err := InflightConfig{Slots: NewFairSlots(8, running), Wait: 2 * time.Second,
		Key:     func(c echo.Context) (string, error) { return c.Request().Header.Get("Tenant"), nil },
		Skipper: func(c echo.Context) bool { return c.QueryParam("costly") == "" },
	}.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	e.GET("/read", func(c echo.Context) error {
		tenant := c.Request().Header.Get("Tenant")
		started <- tenant
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
	var wg sync.WaitGroup
	read := func(tenant string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if rec := do(tenant, "costly=1&hold=1"); rec.Code != http.StatusNoContent {
				t.Errorf("%s's costly read: %d %s", tenant, rec.Code, rec.Body)
			}
		}()
	}
	// A: two running, four waiting.
	for range 6 {
		read("A")
	}
	for range running {
		if got := <-started; got != "A" {
			t.Fatalf("started %s", got)
		}
	}
	time.Sleep(100 * time.Millisecond) // A's four are queued
	select {
	case got := <-started:
		t.Fatalf("a costly read of %s ran beyond the instance's bound", got)
	default:
	}
	read("B")
	time.Sleep(50 * time.Millisecond) // B is queued, last
	// Plain requests of both never wait for the costly ones.
	for _, tenant := range []string{"A", "B"} {
		start := time.Now()
		if rec := do(tenant, ""); rec.Code != http.StatusNoContent || time.Since(start) > time.Second {
			t.Errorf("%s's plain read: %d after %v", tenant, rec.Code, time.Since(start))
		}
		<-started
	}
	release <- struct{}{} // one of A's ends: B, with none running, goes next
	if got := <-started; got != "B" {
		t.Errorf("the next turn went to %s, with B waiting and running none", got)
	}
	for range 5 {
		release <- struct{}{}
	}
	for range 4 {
		if got := <-started; got != "A" {
			t.Errorf("started %s", got)
		}
	}
	release <- struct{}{}
	wg.Wait()

	// Both slots held: a costly read waits Wait, then is refused.
	for range running {
		read("A")
		<-started
	}
	start := time.Now()
	rec := do("B", "costly=1")
	if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), string(problem.ConcurrencyLimited)) ||
		rec.Header().Get("Retry-After") == "" {
		t.Errorf("a read past its wait: %d %s", rec.Code, rec.Body)
	}
	if waited := time.Since(start); waited < 2*time.Second {
		t.Errorf("refused after %v, before its wait", waited)
	}
	for range running {
		release <- struct{}{}
	}
	wg.Wait()
	if len(started) != 0 {
		t.Errorf("%d reads ran that were refused", len(started))
	}
}

// Slots under many goroutines of several keys (run with -race), some giving up
// while they wait (a client hanging up): never more than the bound run at once,
// and the counts end at zero, whoever gave up when.
func TestFairSlotsUnderConcurrency(t *testing.T) {
	t.Parallel()
	s := NewFairSlots(4, 3)
	var mu sync.Mutex
	runningNow, most, ran := 0, 0, 0
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := string(rune('a' + i%5))
			ctx := t.Context()
			if i%7 == 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Duration(i%3)*time.Millisecond)
				defer cancel()
			}
			ok, err := s.Enter(ctx, key)
			if err != nil || !ok {
				return // beyond the key's share
			}
			mu.Lock()
			runningNow++
			most = max(most, runningNow)
			ran++
			mu.Unlock()
			time.Sleep(time.Millisecond)
			mu.Lock()
			runningNow--
			mu.Unlock()
			s.Give(key)
		}()
	}
	wg.Wait()
	if most > 3 {
		t.Errorf("%d ran at once, bound 3", most)
	}
	if ran < 15 {
		t.Errorf("only %d ran", ran)
	}
	if s.total != 0 || len(s.n) != 0 || len(s.active) != 0 || len(s.queue) != 0 {
		t.Errorf("counts left: total %d, n %v, active %v, queue %d", s.total, s.n, s.active, len(s.queue))
	}
}
