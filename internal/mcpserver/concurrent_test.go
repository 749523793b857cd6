package mcpserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/apiversion"
)

// Agents and HTTP clients racing with one key and one write: exactly one runs; every
// other answer is its replay or IDEMPOTENCY_KEY_IN_USE, never a second risk.
func TestConcurrentCallsWithOneKeyMakeOneRisk(t *testing.T) {
	env := apitest.New(t)
	ten := env.Tenant("acme")
	base := server(t, env)
	const agents, httpClients = 4, 4
	var wg sync.WaitGroup
	var mu sync.Mutex
	executed, ids := 0, map[string]bool{}
	note := func(ran bool, id string) {
		mu.Lock()
		defer mu.Unlock()
		if ran {
			executed++
		}
		ids[id] = true
	}
	for i := range agents {
		cs := connect(t, base, ten.Key)
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := callErr(cs, "create_risk", map[string]any{"idempotencyKey": "race-key-0001", "risk": map[string]any{"title": "Raced"}})
			switch {
			case err != nil:
				t.Errorf("agent %d: %v", i, err)
			case out["__isError"] == true:
				if out["code"] != "IDEMPOTENCY_KEY_IN_USE" {
					t.Errorf("agent %d: %v", i, out)
				}
			default:
				note(out["replayed"] == false, fmt.Sprint(out["result"].(map[string]any)["id"]))
			}
		}()
	}
	for i := range httpClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, base+"/v2/risks", strings.NewReader(`{"title":"Raced"}`))
			req.Header.Set("Authorization", "Bearer "+ten.Key)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "race-key-0001")
			req.Header.Set(apiversion.Header, string(apiversion.API.Newest())) // the tools' version
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("http %d: %v", i, err)
				return
			}
			defer resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusCreated:
				var r struct{ ID string }
				if err := jsonDecode(resp, &r); err != nil {
					t.Error(err)
				}
				note(resp.Header.Get("Idempotent-Replayed") == "false", r.ID)
			case http.StatusConflict:
			default:
				t.Errorf("http %d: %d", i, resp.StatusCode)
			}
		}()
	}
	wg.Wait()
	if n := countRisks(t, env, ten.Key); n != 1 {
		t.Fatalf("%d risks, want 1", n)
	}
	if executed != 1 || len(ids) != 1 {
		t.Fatalf("%d answers said they ran, ids %v: want 1 and one id", executed, ids)
	}
}
