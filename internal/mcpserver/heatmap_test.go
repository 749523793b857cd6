package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/trends"
)

// TestHeatmapMovedSinceOverMCP: get_heatmap's movedSince answers the moves the HTTP
// route answers, and refuses what it refuses (a bad or future day, more changes since
// than trends.MaxMoveEntries) as the tool error VALIDATION_FAILED naming movedSince.
// The bound is lowered to 3 (not parallel: nothing else reads it meanwhile).
func TestHeatmapMovedSinceOverMCP(t *testing.T) {
	const bound = 3
	prod := trends.MaxMoveEntries
	trends.MaxMoveEntries = bound
	t.Cleanup(func() { trends.MaxMoveEntries = prod })

	env := apitest.New(t)
	ten := env.Tenant("acme")
	cs := connect(t, server(t, env), ten.ReadKey)
	create := func(l, i int) string {
		t.Helper()
		return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: ten.Key,
			JSON: map[string]any{"title": "r", "likelihood": l, "impact": i}}).Expect(http.StatusCreated).Map()["id"].(string)
	}
	a := create(1, 1)
	env.Clock.Advance(48 * time.Hour)
	today := env.Clock.Now().UTC().Format(time.DateOnly)
	env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + a, Bearer: ten.Key,
		JSON: map[string]any{"likelihood": 4}}).Expect(http.StatusOK)
	create(2, 2)

	args := map[string]any{"movedSince": today}
	res := resultOf(t, mustOK(t, cs, "get_heatmap", args))
	var overHTTP map[string]any
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/heatmap?movedSince=" + today, Bearer: ten.ReadKey}).
		Expect(http.StatusOK).Decode(&overHTTP)
	if res["movedSince"] != today || !equalJSON(res["moves"], overHTTP["moves"]) {
		t.Errorf("over MCP %v, over HTTP %v", res, overHTTP)
	}
	moves, _ := res["moves"].([]any)
	if len(moves) != 2 { // a: (1,1) → (4,1); the new one: none → (2,2)
		t.Errorf("moves %v, want 2", moves)
	}

	create(3, 3) // the bound: 3 entries since today began
	mustOK(t, cs, "get_heatmap", args)
	create(3, 3)
	p := mustFail(t, cs, "get_heatmap", args, "VALIDATION_FAILED")
	if !strings.Contains(p["detail"].(string), "movedSince") || !strings.Contains(p["detail"].(string), "later date") {
		t.Errorf("past the bound: %v", p)
	}
	for _, bad := range []string{"yesterday", env.Clock.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)} {
		p := mustFail(t, cs, "get_heatmap", map[string]any{"movedSince": bad}, "VALIDATION_FAILED")
		if !strings.Contains(p["detail"].(string), "movedSince") {
			t.Errorf("movedSince %q: %v", bad, p)
		}
	}
}

// equalJSON reports whether a and b encode to the same JSON.
func equalJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
