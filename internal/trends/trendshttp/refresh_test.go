package trendshttp_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
)

// startWithADayAhead moves env's clock to just after the next midnight UTC when the
// day it runs in would end within Settle and a few minutes: the clock runs with real
// time, and a test whose changes and runs span two days sees two points of the
// series where it expects today's one.
func startWithADayAhead(env *apitest.Env) {
	if now := env.Clock.Now().UTC(); now.Add(env.App.Snapshots.Settle+5*time.Minute).Day() != now.Day() {
		env.Clock.Advance(now.Truncate(24 * time.Hour).Add(24*time.Hour + time.Minute).Sub(now))
	}
}

func run(t *testing.T, env *apitest.Env) int {
	t.Helper()
	n, err := env.App.Snapshots.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTodaysPointIsAsOfTheLastRun: a change made after the day's first snapshot is
// in today's point after the next run (docs/register.md, Trends): the series never
// shows the day's first snapshot standing for the day, even once idle tenants are
// skipped.
func TestTodaysPointIsAsOfTheLastRun(t *testing.T) {
	env := apitest.New(t)
	startWithADayAhead(env)
	ten := env.Tenant("Refresh")
	create := func(l, i int) {
		t.Helper()
		env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: ten.Key,
			JSON: map[string]any{"title": "r", "likelihood": l, "impact": i}}).Expect(http.StatusCreated)
	}
	create(1, 2)
	run(t, env)
	first := getSeries(t, env, ten.ReadKey, "")
	// Long after (the same day): the snapshot is no longer stale, then a change.
	env.Clock.Advance(env.App.Snapshots.Settle + time.Minute)
	run(t, env)
	create(5, 5)
	run(t, env)
	s := getSeries(t, env, ten.ReadKey, "")
	if len(first.Points) != 1 || len(s.Points) != 1 || s.Points[0].Day != first.Points[0].Day {
		t.Fatalf("points %+v then %+v: want one, today's", first.Points, s.Points)
	}
	if p := s.Points[0]; p.Total != 2 || p.ByBand["critical"] != 1 || !p.TakenAt.After(first.Points[0].TakenAt) {
		t.Fatalf("today's point after the change %+v, the first %+v: want 2 risks, one critical, taken later", p, first.Points[0])
	}
}

// TestIdleTenantsAreNotRecounted: a run recounts a tenant whose snapshot of today
// is missing or stale (a change recorded since Settle before its count), and skips
// the others; a change, or a new day, makes it due again.
func TestIdleTenantsAreNotRecounted(t *testing.T) {
	env := apitest.New(t)
	startWithADayAhead(env)
	busy, idle := env.Tenant("Busy"), env.Tenant("Idle")
	create := func(key string) {
		t.Helper()
		env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: key,
			JSON: map[string]any{"title": "r", "likelihood": 3, "impact": 3}}).Expect(http.StatusCreated)
	}
	create(busy.Key)
	create(idle.Key)
	all := run(t, env) // every tenant of the store: these two, their sandboxes, others'
	if all < 2 {
		t.Fatalf("first run snapshotted %d tenants", all)
	}
	// Within Settle of the changes: still counted, as a late commit may hide there.
	if n := run(t, env); n < 2 {
		t.Fatalf("run within Settle of the changes: %d tenants, want both again", n)
	}
	env.Clock.Advance(env.App.Snapshots.Settle + time.Second)
	run(t, env) // the last count that could miss a change
	if n := run(t, env); n != 0 {
		t.Fatalf("idle run: %d tenants recounted, want none", n)
	}
	create(busy.Key)
	if n := run(t, env); n != 1 {
		t.Fatalf("after a change of one tenant: %d recounted, want 1", n)
	}
	if p := getSeries(t, env, busy.ReadKey, "").Points; len(p) != 1 || p[0].Total != 2 {
		t.Fatalf("busy tenant's today %+v: want its 2 risks", p)
	}
	if p := getSeries(t, env, idle.ReadKey, "").Points; len(p) != 1 || p[0].Total != 1 {
		t.Fatalf("idle tenant's today %+v: want its 1 risk", p)
	}
	env.Clock.Advance(24 * time.Hour)
	if n := run(t, env); n != all {
		t.Fatalf("a new day: %d tenants, want all %d", n, all)
	}
}
