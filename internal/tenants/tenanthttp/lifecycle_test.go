package tenanthttp_test

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
)

// apiKey is an API key as /v1/api-keys shows it, with its secret when one is shown.
type apiKey struct {
	ID           string     `json:"id"`
	Name         string     `json:"name"`
	Scopes       []string   `json:"scopes"`
	ExpiresAt    *time.Time `json:"expiresAt"`
	LastUsedAt   *time.Time `json:"lastUsedAt"`
	AllowedCidrs []string   `json:"allowedCidrs"`
	RolledTo     *string    `json:"rolledTo"`
	Key          string     `json:"key"`
	Previous     *apiKey    `json:"previous"`
}

type auditEntry struct {
	Action string `json:"action"`
	Actor  struct {
		Type string  `json:"type"`
		ID   *string `json:"id"`
	} `json:"actor"`
	Target struct {
		ID string `json:"id"`
	} `json:"target"`
	IP string `json:"ip"`
}

// audit returns the tenant's audit entries of action, newest first.
func audit(t *testing.T, env *apitest.Env, tok, action string) []auditEntry {
	t.Helper()
	var page struct{ Data []auditEntry }
	apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v1/audit-log?action=" + action, Bearer: tok}).Expect(200).Decode(&page)
	return page.Data
}

// waitAudit waits up to 5s for n entries of action (bookkeeping is written off the
// request's path) and returns them.
func waitAudit(t *testing.T, env *apitest.Env, tok, action string, n int) []auditEntry {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := audit(t, env, tok, action)
		if len(got) >= n || time.Now().After(deadline) {
			if len(got) != n {
				t.Fatalf("%d %s entries, want %d", len(got), action, n)
			}
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func createKey(t *testing.T, env *apitest.Env, tok string, body map[string]any) apiKey {
	t.Helper()
	var k apiKey
	apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v1/api-keys", Bearer: tok, JSON: body}).Expect(201).Decode(&k)
	return k
}

func listRisks(t *testing.T, env *apitest.Env, secret string) *apitest.Response {
	t.Helper()
	return apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: secret})
}

// TestKeyExpiresAt: a key created with expiresAt works until then and is 401
// API_KEY_EXPIRED after it, by the real clock; its expiry is in the audit log once,
// however many requests it refused; expiresAt in the past is refused at creation.
func TestKeyExpiresAt(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	tok := apitest.Login(t, env, a).Token
	apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v1/api-keys", Bearer: tok,
		JSON: map[string]any{"scopes": []string{"risks:read"}, "expiresAt": time.Now().Add(-time.Second)}}).
		ExpectProblem(400, "VALIDATION_FAILED")

	ends := time.Now().Add(1500 * time.Millisecond)
	k := createKey(t, env, tok, map[string]any{"name": "ci", "scopes": []string{"risks:read"}, "expiresAt": ends})
	if k.ExpiresAt == nil || !k.ExpiresAt.Equal(ends.UTC().Truncate(time.Microsecond)) {
		t.Fatalf("expiresAt %v, want %v", k.ExpiresAt, ends)
	}
	listRisks(t, env, k.Key).Expect(200)
	time.Sleep(time.Until(ends) + 50*time.Millisecond)
	for range 3 {
		res := listRisks(t, env, k.Key).ExpectProblem(401, "API_KEY_EXPIRED")
		if res.Header().Get("WWW-Authenticate") == "" {
			t.Fatal("401 API_KEY_EXPIRED without WWW-Authenticate")
		}
	}
	got := waitAudit(t, env, tok, "api_key.expired", 1)
	if got[0].Target.ID != k.ID || got[0].Actor.Type != "api_key" {
		t.Fatalf("api_key.expired entry %+v, want target and actor the key %s", got[0], k.ID)
	}
	// The sweep finds nothing more to record for it.
	if n, err := env.App.Tenants.RecordExpiredKeys(t.Context(), 100); err != nil || n != 0 {
		t.Fatalf("RecordExpiredKeys = %d, %v; want 0: recorded already", n, err)
	}
}

// TestUnusedKeyExpiryIsRecordedBySweep: a key that expires without a request is
// recorded as expired by the sweep (actor system), once.
func TestUnusedKeyExpiryIsRecordedBySweep(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	tok := apitest.Login(t, env, a).Token
	k := createKey(t, env, tok, map[string]any{"scopes": []string{"risks:read"}, "expiresAt": time.Now().Add(300 * time.Millisecond)})
	time.Sleep(400 * time.Millisecond)
	for range 2 {
		if _, err := env.App.Sweep(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	got := waitAudit(t, env, tok, "api_key.expired", 1)
	if got[0].Target.ID != k.ID || got[0].Actor.Type != "system" {
		t.Fatalf("entry %+v, want the key, by system", got[0])
	}
}

// TestRollKeepsTheOldSecretForItsOverlap: a roll answers a new secret with the same
// name and scopes; both secrets work during the overlap, the old one is 401
// API_KEY_EXPIRED after it, the new one still works; the roll is audited, and the
// rolled key cannot be rolled again. expiresIn 0 ends the old secret at once; one
// past 7 days is refused.
func TestRollKeepsTheOldSecretForItsOverlap(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	tok := apitest.Login(t, env, a).Token
	old := createKey(t, env, tok, map[string]any{"name": "deploy", "scopes": []string{"risks:read", "events:read"},
		"allowedCidrs": []string{"192.0.2.0/24"}})
	roll := func(id string, expiresIn any) *apitest.Response {
		return apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v1/api-keys/" + id + "/roll", Bearer: tok,
			JSON: map[string]any{"expiresIn": expiresIn}})
	}
	roll(old.ID, 604801).ExpectProblem(400, "VALIDATION_FAILED")
	roll(old.ID, -1).ExpectProblem(400, "VALIDATION_FAILED")
	apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v1/api-keys/" + old.ID + "/roll", Bearer: tok,
		Header: http.Header{"Idempotency-Key": {"roll-key-0001"}}, JSON: map[string]any{"expiresIn": 1}}).
		ExpectProblem(422, "IDEMPOTENCY_UNSUPPORTED_ROUTE")

	var next apiKey
	rolledAt := time.Now()
	roll(old.ID, 1).Expect(201).Decode(&next)
	if next.Key == "" || next.Key == old.Key || next.ID == old.ID || next.Name != "deploy" ||
		len(next.Scopes) != 2 || len(next.AllowedCidrs) != 1 || next.ExpiresAt != nil {
		t.Fatalf("rolled key %+v: want a new secret with the old name, scopes and networks, no expiry", next)
	}
	if next.Previous == nil || next.Previous.RolledTo == nil || *next.Previous.RolledTo != next.ID || next.Previous.ExpiresAt == nil {
		t.Fatalf("previous %+v: want it rolled to %s with an expiry", next.Previous, next.ID)
	}
	listRisks(t, env, old.Key).Expect(200)
	listRisks(t, env, next.Key).Expect(200)
	roll(old.ID, 60).ExpectProblem(400, "VALIDATION_FAILED")
	time.Sleep(time.Until(rolledAt.Add(1100 * time.Millisecond)))
	listRisks(t, env, old.Key).ExpectProblem(401, "API_KEY_EXPIRED")
	listRisks(t, env, next.Key).Expect(200)
	rolled := waitAudit(t, env, tok, "api_key.rolled", 1)
	if rolled[0].Target.ID != old.ID || rolled[0].Actor.Type != "user" {
		t.Fatalf("api_key.rolled %+v, want the old apiKey by the admin", rolled[0])
	}
	waitAudit(t, env, tok, "api_key.expired", 1)

	var now apiKey
	roll(next.ID, 0).Expect(201).Decode(&now)
	listRisks(t, env, next.Key).ExpectProblem(401, "API_KEY_EXPIRED")
	listRisks(t, env, now.Key).Expect(200)
}

// A roll may give the new key an expiry of its own (newKeyExpiresAt): a key meant
// to lapse stays one after a roll, whose default is a key with none. A time not in
// the future is refused and rolls nothing.
func TestRollGivesTheNewKeyItsExpiry(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	tok := apitest.Login(t, env, a).Token
	old := createKey(t, env, tok, map[string]any{"name": "ci", "scopes": []string{"risks:read"},
		"expiresAt": time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)})
	roll := func(body map[string]any) *apitest.Response {
		return apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v1/api-keys/" + old.ID + "/roll", Bearer: tok, JSON: body})
	}
	res := roll(map[string]any{"expiresIn": 60, "newKeyExpiresAt": time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)}).
		ExpectProblem(400, "VALIDATION_FAILED")
	if !strings.Contains(res.Body.String(), `"field":"newKeyExpiresAt"`) {
		t.Fatalf("%s, want newKeyExpiresAt named", res.Body)
	}
	listRisks(t, env, old.Key).Expect(200) // the refused roll left the key as it was
	want := time.Now().Add(30 * 24 * time.Hour).UTC().Truncate(time.Second)
	var next apiKey
	roll(map[string]any{"expiresIn": 60, "newKeyExpiresAt": want.Format(time.RFC3339)}).Expect(201).Decode(&next)
	if next.ExpiresAt == nil || !next.ExpiresAt.Equal(want) {
		t.Fatalf("new key expiresAt %v, want %v", next.ExpiresAt, want)
	}
	listRisks(t, env, next.Key).Expect(200)
}

// TestAllowedCidrs: a key limited to networks works from them and is 403
// IP_NOT_ALLOWED from elsewhere — the client address being the one the server
// derives through TRUSTED_PROXIES, never a header an untrusted peer sets; each
// refusal is audited (once a minute per key).
func TestAllowedCidrs(t *testing.T) {
	t.Parallel()
	_, proxies, _ := net.ParseCIDR("192.0.2.0/24") // httptest's RemoteAddr
	env := apitest.New(t, func(c *config.Config) { c.HTTP.TrustedProxies = []*net.IPNet{proxies} })
	a := env.Tenant("Acme")
	tok := apitest.Login(t, env, a).Token
	// Every entry that is no network is named, so two typos take one round to mend.
	var refused struct {
		Errors []struct{ Field, Detail string }
	}
	apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v1/api-keys", Bearer: tok,
		JSON: map[string]any{"scopes": []string{"risks:read"}, "allowedCidrs": []string{"not-a-network", "203.0.113.0/24", "10.0.0.0/33"}}}).
		ExpectProblem(400, "VALIDATION_FAILED").Decode(&refused)
	if len(refused.Errors) != 2 || !strings.Contains(refused.Errors[0].Detail, `"not-a-network"`) ||
		!strings.Contains(refused.Errors[1].Detail, `"10.0.0.0/33"`) || refused.Errors[1].Field != "allowedCidrs" {
		t.Errorf("two bad networks: errors %+v, want each named under allowedCidrs", refused.Errors)
	}
	k := createKey(t, env, tok, map[string]any{"scopes": []string{"risks:read"}, "allowedCidrs": []string{"203.0.113.0/24", "2001:db8::1"}})
	if len(k.AllowedCidrs) != 2 || k.AllowedCidrs[1] != "2001:db8::1/128" {
		t.Fatalf("allowedCidrs %v", k.AllowedCidrs)
	}
	from := func(addr string) *apitest.Response {
		return apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: k.Key,
			Header: http.Header{"X-Forwarded-For": {addr}}})
	}
	from("203.0.113.77").Expect(200)
	from("2001:db8::1").Expect(200)
	from("198.51.100.7").ExpectProblem(403, "IP_NOT_ALLOWED")
	from("198.51.100.7").ExpectProblem(403, "IP_NOT_ALLOWED")
	// The proxy itself is not an allowed network.
	listRisks(t, env, k.Key).ExpectProblem(403, "IP_NOT_ALLOWED")
	got := waitAudit(t, env, tok, "api_key.refused", 1)
	if got[0].Target.ID != k.ID || got[0].IP != "198.51.100.7" {
		t.Fatalf("api_key.refused %+v: want the key, from 198.51.100.7", got[0])
	}

	// Without TRUSTED_PROXIES, X-Forwarded-For names nobody: the peer is the client.
	plain := apitest.New(t)
	b := plain.Tenant("Beta")
	btok := apitest.Login(t, plain, b).Token
	kb := createKey(t, plain, btok, map[string]any{"scopes": []string{"risks:read"}, "allowedCidrs": []string{"203.0.113.0/24"}})
	apitest.Do(t, plain, apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: kb.Key,
		Header: http.Header{"X-Forwarded-For": {"203.0.113.77"}}}).ExpectProblem(403, "IP_NOT_ALLOWED")
}

// TestLastUsedAtIsWrittenOnceAMinute: a key's first request records its last use;
// more requests within the minute change nothing (no write per request).
func TestLastUsedAtIsWrittenOnceAMinute(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	tok := apitest.Login(t, env, a).Token
	k := createKey(t, env, tok, map[string]any{"scopes": []string{"risks:read"}})
	lastUsed := func() *time.Time {
		var page struct{ Data []apiKey }
		apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v1/api-keys", Bearer: tok}).Expect(200).Decode(&page)
		for _, x := range page.Data {
			if x.ID == k.ID {
				return x.LastUsedAt
			}
		}
		t.Fatal("apiKey not listed")
		return nil
	}
	if lastUsed() != nil {
		t.Fatal("unused apiKey has lastUsedAt")
	}
	listRisks(t, env, k.Key).Expect(200)
	env.App.Tenants.Wait()
	first := lastUsed()
	if first == nil {
		t.Fatal("lastUsedAt not recorded")
	}
	time.Sleep(20 * time.Millisecond)
	for range 5 {
		listRisks(t, env, k.Key).Expect(200)
	}
	env.App.Tenants.Wait()
	if again := lastUsed(); again == nil || !again.Equal(*first) {
		t.Fatalf("lastUsedAt %v after more requests within the minute, want %v", again, first)
	}
}

// TestRefusedAddressIsNoUse: a request refused by the key's allowedCidrs (403
// IP_NOT_ALLOWED) leaves its lastUsedAt null; an allowed one sets it.
func TestRefusedAddressIsNoUse(t *testing.T) {
	t.Parallel()
	_, proxies, _ := net.ParseCIDR("192.0.2.0/24") // httptest's RemoteAddr
	env := apitest.New(t, func(c *config.Config) { c.HTTP.TrustedProxies = []*net.IPNet{proxies} })
	a := env.Tenant("Acme")
	tok := apitest.Login(t, env, a).Token
	k := createKey(t, env, tok, map[string]any{"scopes": []string{"risks:read"}, "allowedCidrs": []string{"203.0.113.0/24"}})
	lastUsed := func() *time.Time {
		env.App.Tenants.Wait()
		var page struct{ Data []apiKey }
		apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v1/api-keys", Bearer: tok}).Expect(200).Decode(&page)
		for _, x := range page.Data {
			if x.ID == k.ID {
				return x.LastUsedAt
			}
		}
		t.Fatal("apiKey not listed")
		return nil
	}
	from := func(addr string) *apitest.Response {
		return apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: k.Key,
			Header: http.Header{"X-Forwarded-For": {addr}}})
	}
	from("198.51.100.7").ExpectProblem(403, "IP_NOT_ALLOWED")
	if got := lastUsed(); got != nil {
		t.Fatalf("lastUsedAt %v after a refused request, want null", got)
	}
	from("203.0.113.77").Expect(200)
	if lastUsed() == nil {
		t.Fatal("lastUsedAt not recorded after an allowed request")
	}
}

// TestRollKeepsTheKeysMode: a test-mode key rolls into a test-mode key (contract
// section 19: the same name, scopes and mode), which reads the sandbox's risks and
// not the live ones; a live key rolls into a live one.
func TestRollKeepsTheKeysMode(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	tok := apitest.Login(t, env, a).Token
	scopes := []string{"risks:read", "risks:write"}
	for _, mode := range []string{"test", "live"} {
		old := createKey(t, env, tok, map[string]any{"name": mode + "-ci", "scopes": scopes, "mode": mode})
		var next struct {
			apiKey
			Mode     string `json:"mode"`
			Livemode bool   `json:"livemode"`
		}
		apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v1/api-keys/" + old.ID + "/roll", Bearer: tok,
			JSON: map[string]any{"expiresIn": 0}}).Expect(201).Decode(&next)
		if next.Mode != mode || next.Livemode != (mode == "live") || next.Name != mode+"-ci" || !strings.HasPrefix(next.Key, "rk_"+mode+"_") {
			t.Errorf("a %s key rolled into %+v, want mode %s", mode, next, mode)
			continue
		}
		var r struct {
			ID       string `json:"id"`
			Livemode bool   `json:"livemode"`
		}
		apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: next.Key,
			JSON: map[string]any{"title": "made by the rolled " + mode + " key"}}).Expect(201).Decode(&r)
		if r.Livemode != (mode == "live") {
			t.Errorf("the rolled %s key made a risk with livemode %v", mode, r.Livemode)
		}
		// The tenant's live key sees live risks only.
		status := 200
		if mode == "test" {
			status = 404
		}
		apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks/" + r.ID, Bearer: a.Key}).Expect(status)
	}
}
