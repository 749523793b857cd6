package trendshttp_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/trends"
)

type movedMap struct {
	Basis      string
	Unassessed int
	MovedSince string
	Moves      []risks.Move
}

func cell(l, i int) *risks.Cell { return &risks.Cell{Likelihood: l, Impact: i} }

// TestHeatmapMovedSince: with movedSince, the heat map says where each selected risk
// whose cell changed since that day began came from (a new or then unassessed risk
// from no cell, one unassessed now to none), counted by (from, to), on either basis;
// a risk moved and moved back, one moved before the date, one the filters leave out
// and another tenant's are not counted; a bad, future or swept date is 400.
func TestHeatmapMovedSince(t *testing.T) {
	env := apitest.New(t)
	ten := env.Tenant("Moves")
	create := func(body map[string]any) string {
		t.Helper()
		body["title"] = "r"
		return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: ten.Key, JSON: body}).
			Expect(http.StatusCreated).Map()["id"].(string)
	}
	patch := func(id string, body map[string]any) {
		t.Helper()
		env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + id, Bearer: ten.Key, JSON: body}).Expect(http.StatusOK)
	}
	heatmap := func(query string) movedMap {
		t.Helper()
		var m movedMap
		env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/heatmap?" + query, Bearer: ten.ReadKey}).
			Expect(http.StatusOK).Decode(&m)
		return m
	}
	a := create(map[string]any{"likelihood": 2, "impact": 3, "residualLikelihood": 2, "residualImpact": 2, "category": "Ops"})
	b := create(map[string]any{"likelihood": 4, "impact": 4, "category": "Ops"})
	c := create(map[string]any{"category": "Ops"})
	d := create(map[string]any{"likelihood": 1, "impact": 1, "category": "Ops"})
	f := create(map[string]any{"likelihood": 1, "impact": 2, "category": "Ops"})
	g := create(map[string]any{"likelihood": 1, "impact": 1, "category": "IT"})
	h := create(map[string]any{"likelihood": 3, "impact": 1, "category": "Ops"})
	h2 := create(map[string]any{"likelihood": 3, "impact": 1, "category": "Ops"})
	patch(d, map[string]any{"likelihood": 2}) // moved before the date: (2,1) all along since
	other := env.Tenant("Elsewhere")
	oid := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: other.Key,
		JSON: map[string]any{"title": "o", "likelihood": 1, "impact": 1}}).Expect(http.StatusCreated).Map()["id"].(string)

	env.Clock.Advance(48 * time.Hour)
	since := day(env, 0)
	patch(a, map[string]any{"likelihood": 5, "residualLikelihood": 3}) // (2,3) → (5,3); residual (2,2) → (3,2)
	patch(a, map[string]any{"title": "renamed"})
	patch(b, map[string]any{"likelihood": 3}) // moved and moved back
	patch(b, map[string]any{"likelihood": 4})
	patch(c, map[string]any{"likelihood": 2, "impact": 2}) // unassessed → (2,2)
	e := create(map[string]any{"likelihood": 3, "impact": 3, "category": "Ops"})
	patch(e, map[string]any{"impact": 4})                  // new → (3,4)
	patch(f, map[string]any{"impact": nil})                // (1,2) → unassessed
	patch(g, map[string]any{"likelihood": 2, "impact": 2}) // IT: filtered out below
	patch(h, map[string]any{"impact": 5})                  // (3,1) → (3,5)
	patch(h2, map[string]any{"impact": 4})                 // (3,1) → (3,4) → (3,5)
	patch(h2, map[string]any{"impact": 5})
	env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + oid, Bearer: other.Key,
		JSON: map[string]any{"likelihood": 5}}).Expect(http.StatusOK)

	want := []risks.Move{
		{From: nil, To: cell(2, 2), Count: 1},
		{From: nil, To: cell(3, 4), Count: 1},
		{From: cell(1, 2), To: nil, Count: 1},
		{From: cell(2, 3), To: cell(5, 3), Count: 1},
		{From: cell(3, 1), To: cell(3, 5), Count: 2},
	}
	got := heatmap("category=Ops&movedSince=" + since)
	if got.MovedSince != since {
		t.Errorf("movedSince %q, want %q", got.MovedSince, since)
	}
	if diff := cmp.Diff(want, got.Moves); diff != "" {
		t.Errorf("moves since %s, category Ops (-by hand +heat map):\n%s", since, diff)
	}
	// Any day between the two counts the same changes; since before the risks were
	// made, every risk on a cell now is new; unfiltered, g's move is counted.
	if diff := cmp.Diff(want, heatmap("category=Ops&movedSince="+day(env, -1)).Moves); diff != "" {
		t.Errorf("moves since the day before (-by hand +heat map):\n%s", diff)
	}
	all := heatmap("movedSince=" + day(env, -2))
	n := 0
	for _, m := range all.Moves {
		if m.From != nil {
			t.Errorf("since before every risk was created, a move from %+v", *m.From)
		}
		n += m.Count
	}
	if n != 8 { // 9 risks, f unassessed now
		t.Errorf("since before every risk: %d moved, want 8 (%+v)", n, all.Moves)
	}
	wantAll := append(append(want[:2:2], risks.Move{From: cell(1, 1), To: cell(2, 2), Count: 1}), want[2:]...)
	if diff := cmp.Diff(wantAll, heatmap("movedSince="+since).Moves); diff != "" {
		t.Errorf("moves since %s, unfiltered (-by hand +heat map):\n%s", since, diff)
	}
	res := heatmap("basis=residual&movedSince=" + since)
	if diff := cmp.Diff([]risks.Move{{From: cell(2, 2), To: cell(3, 2), Count: 1}}, res.Moves); diff != "" {
		t.Errorf("residual moves (-by hand +heat map):\n%s", diff)
	}
	// Without movedSince the answer has no moves.
	if m := heatmap("category=Ops"); m.MovedSince != "" || m.Moves != nil {
		t.Errorf("heat map without movedSince: %+v", m)
	}
	for _, bad := range []string{"2026-13-01", "yesterday", day(env, 1), day(env, -400)} {
		env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/heatmap?movedSince=" + url.QueryEscape(bad), Bearer: ten.Key}).
			ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	}
}

// TestHeatmapMovedSinceBound: at most trends.MaxMoveEntries audit entries are read
// (docs/register.md, "Moved since"): exactly that many since the day count; one more
// is 400 VALIDATION_FAILED naming movedSince. The bound is lowered to 50 here (not
// parallel: nothing else reads it meanwhile) rather than writing 50,001 entries.
func TestHeatmapMovedSinceBound(t *testing.T) {
	if trends.MaxMoveEntries != 50_000 {
		t.Fatalf("MaxMoveEntries = %d, docs/register.md says 50,000", trends.MaxMoveEntries)
	}
	const bound = 50
	prod := trends.MaxMoveEntries
	trends.MaxMoveEntries = bound
	t.Cleanup(func() { trends.MaxMoveEntries = prod })

	env := apitest.New(t)
	ten := env.Tenant("Bound")
	create := func() {
		t.Helper()
		env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: ten.Key,
			JSON: map[string]any{"title": "r", "likelihood": 2, "impact": 3}}).Expect(http.StatusCreated)
	}
	// Entries that name no factor are not read: they do not count toward the bound.
	id := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: ten.Key,
		JSON: map[string]any{"title": "unassessed"}}).Expect(http.StatusCreated).Map()["id"].(string)
	env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + id, Bearer: ten.Key,
		JSON: map[string]any{"title": "renamed"}}).Expect(http.StatusOK)
	for range bound {
		create()
	}
	path := "/v2/risks/heatmap?movedSince=" + day(env, 0)
	var m movedMap
	env.Do(apitest.Request{Method: http.MethodGet, Path: path, Bearer: ten.ReadKey}).Expect(http.StatusOK).Decode(&m)
	if want := []risks.Move{{From: nil, To: cell(2, 3), Count: bound}}; !cmp.Equal(want, m.Moves) {
		t.Fatalf("at the bound: moves %+v, want %+v", m.Moves, want)
	}
	create()
	p := env.Do(apitest.Request{Method: http.MethodGet, Path: path, Bearer: ten.ReadKey}).
		ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	if !strings.Contains(p.Body.String(), `"movedSince"`) || !strings.Contains(p.Body.String(), "later date") {
		t.Errorf("past the bound: %s, want movedSince asked for a later date", p.Body.String())
	}
	// A later day (tomorrow, once it has come) reads none of them.
	env.Clock.Advance(24 * time.Hour)
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/heatmap?movedSince=" + day(env, 0), Bearer: ten.ReadKey}).
		Expect(http.StatusOK)
}
