package followuphttp_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/due"
	"github.com/riskapi/riskapi/internal/tenants"
)

// TestMovedDatesComeDueAnew: an action's new due date is a new (kind, object, due
// date) — a second action.overdue, with its own ID, while the first is not repeated
// — and an action done or cancelled is noticed no more; a review moves an overdue
// risk's date to today + reviewEvery, so its risk.review_due falls due anew when
// the clock reaches REVIEW_DUE_DAYS before that date, once (contract section 20).
func TestMovedDatesComeDueAnew(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	twin := env.Twin()
	a := env.Tenant("Acme")
	owner := env.User(a.ID, tenants.RoleMember)
	day := today(env)
	date := func(days int) string { return day.AddDate(0, 0, days).Format("2006-01-02") }
	run := func() {
		t.Helper()
		for _, e := range []*apitest.Env{env, twin} {
			if _, err := e.App.Due.Run(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}
	about := func(typ string) map[string]int {
		t.Helper()
		out := map[string]int{}
		for _, ev := range eventsOfType(t, env, a.Key, typ) {
			obj := ev["data"].(map[string]any)["object"].(map[string]any)
			out[obj["id"].(string)]++
		}
		return out
	}

	risk := newRisk(t, env, a.Key, map[string]any{"title": "late", "reviewEvery": "P1M", "reviewDate": date(-2)})
	addAction := func(title string) string {
		return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + risk + "/actions", Bearer: a.Key,
			JSON: map[string]any{"title": title, "ownerId": owner.ID, "dueDate": date(-3)}}).Expect(http.StatusCreated).Map()["id"].(string)
	}
	moved, done, cancelled := addAction("moved"), addAction("done"), addAction("cancelled")
	for _, id := range []string{done, cancelled} {
		status := map[string]string{done: "done", cancelled: "cancelled"}[id]
		env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v2/actions/" + id, Bearer: a.Key,
			JSON: map[string]any{"status": status}}).Expect(http.StatusOK)
	}
	run()
	if got := about("action.overdue"); len(got) != 1 || got[moved] != 1 {
		t.Fatalf("action.overdue about %v, want one about the open action %s only", got, moved)
	}
	if got := about("risk.review_overdue"); got[risk] != 1 {
		t.Fatalf("risk.review_overdue about %v, want one about %s", got, risk)
	}
	first := eventsOfType(t, env, a.Key, "action.overdue")[0]["id"]

	// A new due date, also past: a new notice; the old one is not repeated.
	env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v2/actions/" + moved, Bearer: a.Key,
		JSON: map[string]any{"dueDate": date(-1)}}).Expect(http.StatusOK)
	run()
	run()
	evs := eventsOfType(t, env, a.Key, "action.overdue")
	if len(evs) != 2 || evs[0]["id"] == first || evs[1]["id"] != first {
		t.Fatalf("after moving the due date: %d action.overdue events (newest %v, first %v), want 2 with distinct IDs", len(evs), evs[0]["id"], first)
	}
	// Each ID is the one derived from (kind, object, due date): what any instance mints.
	for i, dueDate := range []string{date(-1), date(-3)} {
		if want := kindOf(t, env, "action.overdue").EventID(due.Item{TenantID: a.ID, ObjectID: moved, DueDate: dueDate}); evs[i]["id"] != want {
			t.Errorf("action.overdue of %s due %s has ID %v, want the derived %s", moved, dueDate, evs[i]["id"], want)
		}
	}

	// A review moves the date a month on: nothing due until 7 days before it, then
	// risk.review_due once.
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + risk + "/reviews", Bearer: a.Key,
		JSON: map[string]any{"outcome": "unchanged"}}).Expect(http.StatusCreated)
	next := day.AddDate(0, 1, 0)
	run()
	if got := about("risk.review_due"); got[risk] != 0 {
		t.Fatalf("risk.review_due about %v right after the review, want none: the next date %s is a month off", got, next.Format("2006-01-02"))
	}
	env.Clock.Advance(next.Sub(day) - 7*24*time.Hour)
	run()
	run()
	if got := about("risk.review_due"); got[risk] != 1 {
		t.Errorf("risk.review_due about %v 7 days before the reviewed date, want one about %s", got, risk)
	}
	if got := about("risk.review_overdue"); got[risk] != 1 {
		t.Errorf("risk.review_overdue about %v, want still the one about the old date", got)
	}
	if got := about("action.overdue"); got[done] != 0 || got[cancelled] != 0 {
		t.Errorf("action.overdue about %v: a done or cancelled action was noticed", got)
	}
}

// kindOf is the schedule's kind of notice typ.
func kindOf(t *testing.T, env *apitest.Env, typ string) due.Kind {
	t.Helper()
	for _, k := range env.App.Due.Kinds {
		if string(k.Action) == typ {
			return k
		}
	}
	t.Fatalf("no due kind %s", typ)
	return due.Kind{}
}
