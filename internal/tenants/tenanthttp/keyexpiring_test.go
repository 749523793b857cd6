package tenanthttp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
)

// expiringEvents lists the tenant's api_key.expiring events, newest first.
func expiringEvents(t *testing.T, env *apitest.Env, key string) []map[string]any {
	t.Helper()
	var page struct{ Data []map[string]any }
	res := apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/events?limit=100&type=api_key.expiring", Bearer: key}).Expect(200)
	apitest.LoadSpec(t, "../../../docs/openapi.yaml").Check(t, "GET", "/v2/events?limit=100&type=api_key.expiring", nil, res)
	res.Decode(&page)
	return page.Data
}

// TestAPIKeyExpiringOnce: the schedule emits api_key.expiring 7 days before a key's
// expiresAt, once per key and date however many runs look (two instances at once
// included), with the key (never its secret) as data.object and an audit entry by
// system; not for a key further off, a revoked key or a rolled one; a key further
// off falls due when the clock reaches its window.
func TestAPIKeyExpiringOnce(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	twin := env.Twin()
	a := env.Tenant("Acme")
	tok := apitest.Login(t, env, a).Token
	scopes := []string{"risks:read"}
	soon := createKey(t, env, tok, map[string]any{"name": "soon", "scopes": scopes, "expiresAt": time.Now().Add(2 * time.Second)})
	later := createKey(t, env, tok, map[string]any{"name": "later", "scopes": scopes, "expiresAt": time.Now().Add(10 * 24 * time.Hour)})
	revoked := createKey(t, env, tok, map[string]any{"name": "revoked", "scopes": scopes, "expiresAt": time.Now().Add(3 * 24 * time.Hour)})
	apitest.Do(t, env, apitest.Request{Method: "DELETE", Path: "/v1/api-keys/" + revoked.ID, Bearer: tok}).Expect(204)
	rolled := createKey(t, env, tok, map[string]any{"name": "rolled", "scopes": scopes})
	apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v1/api-keys/" + rolled.ID + "/roll", Bearer: tok,
		JSON: map[string]any{"expiresIn": 3600}}).Expect(201)

	run := func(e *apitest.Env) {
		if _, err := e.App.Due.Run(t.Context()); err != nil {
			t.Error(err)
		}
	}
	done := make(chan struct{})
	go func() { run(twin); close(done) }()
	run(env)
	<-done
	run(env)
	got := expiringEvents(t, env, a.Key)
	if len(got) != 1 {
		t.Fatalf("%d api_key.expiring events after three runs (two at once), want 1: %v", len(got), got)
	}
	obj := got[0]["data"].(map[string]any)["object"].(map[string]any)
	if obj["id"] != soon.ID {
		t.Fatalf("api_key.expiring is about %v, want the key expiring in 2s %s", obj["id"], soon.ID)
	}
	raw, _ := json.Marshal(got[0])
	if strings.Contains(string(raw), soon.Key) || obj["key"] != nil {
		t.Fatalf("the event shows the key's secret: %s", raw)
	}
	first := got[0]["id"]
	entries := waitAudit(t, env, tok, "api_key.expiring", 1)
	if entries[0].Target.ID != soon.ID || entries[0].Actor.Type != "system" {
		t.Fatalf("audit entry %+v, want the key, by system", entries[0])
	}

	// Past its expiry (real time), it is not noticed again.
	time.Sleep(2100 * time.Millisecond)
	run(twin)
	if got := expiringEvents(t, env, a.Key); len(got) != 1 || got[0]["id"] != first {
		t.Fatalf("after the key expired: %v, want the one event %v", got, first)
	}

	// Four days on, the key due in ten is seven days away: its notice, once.
	env.Clock.Advance(4 * 24 * time.Hour)
	run(env)
	run(twin)
	got = expiringEvents(t, env, a.Key)
	if len(got) != 2 {
		t.Fatalf("%d api_key.expiring events four days on, want 2", len(got))
	}
	ids := map[any]bool{}
	for _, ev := range got {
		ids[ev["data"].(map[string]any)["object"].(map[string]any)["id"]] = true
	}
	if !ids[soon.ID] || !ids[later.ID] {
		t.Fatalf("events are about %v, want %s and %s (not the revoked %s nor the rolled %s)", ids, soon.ID, later.ID, revoked.ID, rolled.ID)
	}
}
