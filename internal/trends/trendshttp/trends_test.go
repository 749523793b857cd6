package trendshttp_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/trends"
)

func day(env *apitest.Env, plus int) string {
	return env.Clock.Now().UTC().AddDate(0, 0, plus).Format(trends.DateLayout)
}

type series struct {
	From, To, Interval string
	Points             []trends.Point
}

func getSeries(t *testing.T, env *apitest.Env, key, query string) series {
	t.Helper()
	var s series
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/register/trends?" + query, Bearer: key}).Expect(http.StatusOK).Decode(&s)
	return s
}

func snapshot(t *testing.T, env *apitest.Env) {
	t.Helper()
	if _, err := env.App.Snapshots.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// counts builds the counts expected of a register, taken by hand.
func counts(total int, status, treatment, band map[string]int, outside, reviews, actions int) trends.Counts {
	c := trends.Counts{Total: total, ByStatus: map[string]int{"open": 0, "mitigated": 0, "closed": 0},
		ByTreatment:     map[string]int{"none": 0, "accept": 0, "mitigate": 0, "transfer": 0, "avoid": 0},
		ByBand:          map[string]int{"unscored": 0, "low": 0, "medium": 0, "high": 0, "critical": 0},
		OutsideAppetite: outside, ReviewsOverdue: reviews, ActionsOverdue: actions}
	for k, v := range status {
		c.ByStatus[k] = v
	}
	for k, v := range treatment {
		c.ByTreatment[k] = v
	}
	for k, v := range band {
		c.ByBand[k] = v
	}
	return c
}

// TestTrendsAgreeWithCountsByHand: the schedule's snapshot of each day counts the
// register as it was (by status, treatment, band, outside appetite, reviews and
// actions overdue), the series answers one point per day a run saw, a day no run saw
// is a gap, and a week's point is its last snapshot.
func TestTrendsAgreeWithCountsByHand(t *testing.T) {
	env := apitest.New(t)
	ten := env.Tenant("Trends")
	admin := apitest.Login(t, env, ten).Token
	owner := env.User(ten.ID, tenants.RoleMember)
	env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/tenant", Bearer: admin,
		JSON: map[string]any{"riskAppetite": 9}}).Expect(http.StatusOK)
	create := func(body map[string]any) string {
		t.Helper()
		return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: ten.Key, JSON: body}).
			Expect(http.StatusCreated).Map()["id"].(string)
	}
	day0 := day(env, 0)
	create(map[string]any{"title": "low", "likelihood": 1, "impact": 2})                                 // 2 low
	mid := create(map[string]any{"title": "mid", "likelihood": 3, "impact": 3, "treatment": "mitigate"}) // 9 medium
	create(map[string]any{"title": "crit", "likelihood": 5, "impact": 5, "reviewDate": day(env, 1)})     // 25 critical, outside
	create(map[string]any{"title": "none", "status": "closed", "reviewDate": day(env, 1)})               // unscored, closed
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + mid + "/actions", Bearer: ten.Key,
		JSON: map[string]any{"title": "fix", "ownerId": owner.ID, "dueDate": day(env, 1)}}).Expect(http.StatusCreated)
	snapshot(t, env)
	want0 := counts(4, map[string]int{"open": 3, "closed": 1}, map[string]int{"none": 3, "mitigate": 1},
		map[string]int{"low": 1, "medium": 1, "critical": 1, "unscored": 1}, 1, 0, 0)

	// Day 1: no run (a gap). Day 3: the review date and the action's due date have
	// passed; mid moved to high, outside appetite.
	env.Clock.Advance(72 * time.Hour)
	day3 := day(env, 0)
	env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + mid, Bearer: ten.Key,
		JSON: map[string]any{"likelihood": 4}}).Expect(http.StatusOK) // 12 high
	snapshot(t, env)
	snapshot(t, env) // a second run the same day refreshes the same point
	want3 := counts(4, map[string]int{"open": 3, "closed": 1}, map[string]int{"none": 3, "mitigate": 1},
		map[string]int{"low": 1, "high": 1, "critical": 1, "unscored": 1}, 2, 1, 1)

	s := getSeries(t, env, ten.ReadKey, "from="+day0+"&to="+day3)
	if len(s.Points) != 2 || s.Points[0].Day != day0 || s.Points[1].Day != day3 {
		t.Fatalf("points %+v: want %s and %s only (the days between are gaps)", s.Points, day0, day3)
	}
	if diff := cmp.Diff(want0, s.Points[0].Counts); diff != "" {
		t.Errorf("day 0 (-by hand +trends):\n%s", diff)
	}
	if diff := cmp.Diff(want3, s.Points[1].Counts); diff != "" {
		t.Errorf("day 3 (-by hand +trends):\n%s", diff)
	}
	// A month holds both days: its point is the last.
	m := getSeries(t, env, ten.ReadKey, "interval=month&from="+day3+"&to="+day3)
	if len(m.Points) != 1 || m.Points[0].Day != day3 {
		t.Fatalf("month points %+v", m.Points)
	}
	// The default range ends today and holds both.
	if d := getSeries(t, env, ten.ReadKey, ""); len(d.Points) != 2 || d.To != day3 || d.Interval != "day" {
		t.Fatalf("default series %+v", d)
	}
	// Another tenant sees none of it: no run saw it yet, then one saw it empty.
	other := env.Tenant("Other")
	if o := getSeries(t, env, other.Key, ""); len(o.Points) != 0 {
		t.Fatalf("other tenant's series before a run %+v", o.Points)
	}
	snapshot(t, env)
	if o := getSeries(t, env, other.Key, ""); len(o.Points) != 1 || o.Points[0].Total != 0 {
		t.Fatalf("other tenant's series %+v", o.Points)
	}
	for _, q := range []string{"interval=year", "from=2026-13-01", "from=2020-01-01&to=2026-01-01", "from=2026-02-01&to=2026-01-01", "limit=3"} {
		env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/register/trends?" + q, Bearer: ten.Key}).
			ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	}
}

// TestSnapshotOncePerDayAcrossInstances: two instances on one store, each running
// the schedule's snapshot at once, many times, then a restart of one: each tenant
// has exactly one snapshot per day a run saw, as of the day's last run, and none for
// the day no instance ran.
func TestSnapshotOncePerDayAcrossInstances(t *testing.T) {
	a := apitest.New(t)
	b := a.Twin()
	var keys []string
	for _, name := range []string{"One", "Two", "Three"} {
		ten := a.Tenant(name)
		keys = append(keys, ten.ReadKey)
		a.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: ten.Key,
			JSON: map[string]any{"title": "r", "likelihood": 2, "impact": 3}}).Expect(http.StatusCreated)
	}
	runAll := func(envs ...*apitest.Env) {
		t.Helper()
		var wg sync.WaitGroup
		for _, e := range envs {
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := e.App.Snapshots.Run(context.Background()); err != nil {
						t.Error(err)
					}
				}()
			}
		}
		wg.Wait()
	}
	day0 := day(a, 0)
	runAll(a, b)
	a.Clock.Advance(48 * time.Hour) // day 1: no instance runs
	// A restart of b: a new instance on the same store.
	c := b.Twin()
	runAll(a, c)
	day2 := day(a, 0)
	var n int64
	if err := a.App.DB.Raw(`SELECT count(*) FROM register_snapshots`).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	var perDay []struct {
		TenantID, Day string
		N             int
	}
	if err := a.App.DB.Raw(`SELECT tenant_id, day, count(*) AS n FROM register_snapshots GROUP BY tenant_id, day HAVING count(*) > 1`).
		Scan(&perDay).Error; err != nil {
		t.Fatal(err)
	}
	if len(perDay) != 0 {
		t.Fatalf("doubled snapshots: %+v", perDay)
	}
	for _, k := range keys {
		s := getSeries(t, a, k, "from="+day0+"&to="+day2)
		if len(s.Points) != 2 || s.Points[0].Day != day0 || s.Points[1].Day != day2 || s.Points[1].Total != 1 {
			t.Fatalf("series %+v: want one point on %s and one on %s", s.Points, day0, day2)
		}
	}
	t.Logf("%d snapshot rows over %d tenants and 2 days a run saw", n, len(keys))
}

// TestScoreHistory: a risk's score history has a point for its creation and each
// change of riskScore or residualScore, in order, each with both scores as they
// then were; other changes add none; another tenant's risk is 404.
func TestScoreHistory(t *testing.T) {
	env := apitest.New(t)
	ten := env.Tenant("History")
	id := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: ten.Key,
		JSON: map[string]any{"title": "h", "likelihood": 2, "impact": 3}}).Expect(http.StatusCreated).Map()["id"].(string)
	patch := func(body map[string]any) {
		t.Helper()
		env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + id, Bearer: ten.Key, JSON: body}).Expect(http.StatusOK)
	}
	patch(map[string]any{"title": "renamed"})
	patch(map[string]any{"impact": 5})
	patch(map[string]any{"residualLikelihood": 1, "residualImpact": 2})
	var got struct{ Data []trends.ScorePoint }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/risks/" + id + "/score-history",
		Bearer: apitest.Login(t, env, ten).Token}).Expect(http.StatusOK).Decode(&got)
	type pt struct{ Risk, Residual int }
	var seen []pt
	for _, p := range got.Data {
		var q pt
		if p.RiskScore != nil {
			q.Risk = *p.RiskScore
		}
		if p.ResidualScore != nil {
			q.Residual = *p.ResidualScore
		}
		seen = append(seen, q)
	}
	if diff := cmp.Diff([]pt{{6, 0}, {10, 0}, {10, 2}}, seen); diff != "" {
		t.Fatalf("score history (-want +got):\n%s", diff)
	}
	other := env.Tenant("Else")
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + id + "/score-history", Bearer: other.Key}).
		ExpectProblem(http.StatusNotFound, "NOT_FOUND")
}
