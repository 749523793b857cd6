package audithttp_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/tenants"
)

func actions(p page) []string {
	var out []string
	for _, e := range p.Data {
		out = append(out, e["action"].(string))
	}
	return out
}

// TestAuditLogAccess: admins read their tenant's log on /v1, keys with audit:read on
// /v2; a member and a key without the scope get 403; another tenant sees none of it,
// not even a deleted risk's history.
func TestAuditLogAccess(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := newAdmin(t, env, "Acme"), newAdmin(t, env, "Globex")
	member := env.User(a.ID, tenants.RoleMember)
	id := createRisk(t, env, a.Key, "secret plan")
	env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v2/risks/" + id, Bearer: a.Key}).Expect(http.StatusNoContent)

	for _, r := range []apitest.Request{
		{Method: http.MethodGet, Path: "/v1/audit-log", Bearer: member.Token},
		{Method: http.MethodGet, Path: "/v1/audit-log/export?format=ndjson", Bearer: member.Token},
		{Method: http.MethodGet, Path: "/v2/audit-log", Bearer: a.ReadKey},
		{Method: http.MethodGet, Path: "/v2/audit-log/export?format=csv", Bearer: a.ReadKey},
	} {
		env.Do(r).ExpectProblem(http.StatusForbidden, "FORBIDDEN")
	}
	// A member reads risks, and so a risk's history.
	hist := getPage(t, env, member.Token, "/v1/risks/"+id+"/history")
	if got := actions(hist); !slices.Equal(got, []string{"risk.created", "risk.deleted"}) {
		t.Errorf("history of a deleted risk, oldest first: %v", got)
	}

	mine := getPage(t, env, a.Token, "/v1/audit-log?limit=100")
	viaKey := getPage(t, env, a.Key, "/v2/audit-log?limit=100")
	if len(mine.Data) == 0 || jsonOf(t, mine) != jsonOf(t, viaKey) {
		t.Fatalf("/v1 and /v2 disagree or are empty:\n%s\n%s", jsonOf(t, mine), jsonOf(t, viaKey))
	}
	theirs := getPage(t, env, b.Token, "/v1/audit-log?limit=100")
	for _, e := range theirs.Data {
		if strings.Contains(jsonOf(t, e), a.ID) || strings.Contains(jsonOf(t, e), id) || e["actor"].(map[string]any)["id"] == a.UserID {
			t.Errorf("another tenant sees %v", e)
		}
	}
	if strings.Contains(jsonOf(t, theirs), id) {
		t.Error("another tenant's log names the risk")
	}
	for _, path := range []string{"/v1/audit-log?targetId=" + id, "/v1/audit-log?actorId=" + a.UserID} {
		if p := getPage(t, env, b.Token, path); len(p.Data) != 0 {
			t.Errorf("%s for another tenant: %v", path, p.Data)
		}
	}
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + id + "/history", Bearer: b.Key}).
		ExpectProblem(http.StatusNotFound, "NOT_FOUND")
}

// TestHistoryShowsAddressesOnlyToAuditReaders: whoever reads risks reads a risk's
// history, but each change's client address and user agent only an admin or a key
// with audit:read sees; a member and a risks:read key get null for both.
func TestHistoryShowsAddressesOnlyToAuditReaders(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := newAdmin(t, env, "Acme")
	member := env.User(a.ID, tenants.RoleMember)
	var r struct{ ID string }
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"Flooded basement"}`,
		Header: http.Header{"User-Agent": {"audit-test/1.0"}}}).Expect(http.StatusCreated).Decode(&r)
	path := "/v1/risks/" + r.ID + "/history"
	for _, c := range []struct {
		who, bearer, path string
		sees              bool
	}{
		{"admin", a.Token, path, true},
		{"key with audit:read", a.Key, "/v2" + path[3:], true},
		{"member", member.Token, path, false},
		{"key with risks:read only", a.ReadKey, "/v2" + path[3:], false},
	} {
		hist := getPage(t, env, c.bearer, c.path)
		if len(hist.Data) != 1 || hist.Data[0]["action"] != "risk.created" {
			t.Fatalf("%s: history %v", c.who, hist.Data)
		}
		e := hist.Data[0]
		if got := e["ip"] != nil && e["userAgent"] == "audit-test/1.0"; got != c.sees {
			t.Errorf("%s sees the address and user agent: %v, want %v (ip %v, userAgent %v)", c.who, got, c.sees, e["ip"], e["userAgent"])
		}
		if e["actor"].(map[string]any)["id"] != a.KeyID {
			t.Errorf("%s: actor %v, want the key", c.who, e["actor"])
		}
	}
}

// TestHistoryHoldsTheRisksAttachments: a risk's history lists the upload and the
// deletion of its attachments among its own changes, in order, and those removed
// with the risk; another risk's history holds none of them.
func TestHistoryHoldsTheRisksAttachments(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := newAdmin(t, env, "Acme")
	id, other := createRisk(t, env, a.Key, "Flooded basement"), createRisk(t, env, a.Key, "Leaky roof")
	upload := func(risk, name string) string {
		body, ct := apitest.Multipart("", apitest.FilePart("file", name, "text/plain", "evidence"))
		var att struct{ ID string }
		env.Upload("/v2/risks/"+risk+"/attachments", a.Key, nil, body, ct).Expect(http.StatusCreated).Decode(&att)
		return att.ID
	}
	first := upload(id, "photo.txt")
	upload(other, "roof.txt")
	env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + id, Bearer: a.Key,
		JSON: map[string]any{"title": "Flooded cellar"}}).Expect(http.StatusOK)
	env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v2/attachments/" + first, Bearer: a.Key}).
		Expect(http.StatusNoContent)
	second := upload(id, "invoice.txt")

	hist := getPage(t, env, a.Token, "/v1/risks/"+id+"/history")
	want := []string{"risk.created", "attachment.created", "risk.updated", "attachment.deleted", "attachment.created"}
	if got := actions(hist); !slices.Equal(got, want) {
		t.Fatalf("history: %v, want %v", got, want)
	}
	for i, att := range map[int]string{1: first, 3: first, 4: second} {
		if got := hist.Data[i]["target"].(map[string]any)["id"]; got != att {
			t.Errorf("entry %d (%s) targets %v, want %s", i, want[i], got, att)
		}
	}
	// Paged one at a time, the same entries.
	var walked []string
	for path := "/v1/risks/" + id + "/history?limit=1"; ; {
		p := getPage(t, env, a.Token, path)
		walked = append(walked, actions(p)...)
		if !p.HasMore {
			break
		}
		path = "/v1/risks/" + id + "/history?limit=1&cursor=" + *p.NextCursor
	}
	if !slices.Equal(walked, want) {
		t.Errorf("paged history: %v, want %v", walked, want)
	}
	if got := actions(getPage(t, env, a.Key, "/v2/risks/"+other+"/history")); !slices.Equal(got, []string{"risk.created", "attachment.created"}) {
		t.Errorf("the other risk's history: %v", got)
	}
	// Deleting the risk removes its remaining attachment: both are in its history.
	env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v2/risks/" + id, Bearer: a.Key}).Expect(http.StatusNoContent)
	got := actions(getPage(t, env, a.Token, "/v1/risks/"+id+"/history"))
	if tail := got[len(want):]; len(tail) != 2 || !slices.Contains(tail, "attachment.deleted") || !slices.Contains(tail, "risk.deleted") {
		t.Errorf("after the risk's deletion, history ends %v", tail)
	}
}

// TestAuditLogFiltersPagesAndExports: filters select, cursor pages walk the log
// newest first without gaps or repeats, and both exports hold the same entries.
func TestAuditLogFiltersPagesAndExports(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := newAdmin(t, env, "Acme")
	id := createRisk(t, env, a.Key, "v1")
	start := env.Clock.Now()
	env.Clock.Advance(time.Minute)
	for _, title := range []string{"v2", "v3", "v4"} {
		env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/risks/" + id, Bearer: a.Token,
			JSON: map[string]any{"title": title}}).Expect(http.StatusOK)
	}
	all := getPage(t, env, a.Token, "/v1/audit-log?limit=100")
	var walked []map[string]any
	for path := "/v1/audit-log?limit=2"; ; {
		p := getPage(t, env, a.Token, path)
		walked = append(walked, p.Data...)
		if !p.HasMore {
			break
		}
		path = "/v1/audit-log?limit=2&cursor=" + *p.NextCursor
	}
	if jsonOf(t, walked) != jsonOf(t, all.Data) {
		t.Fatalf("pages of 2 walked %d entries, one page has %d", len(walked), len(all.Data))
	}
	for i := 1; i < len(all.Data); i++ {
		if all.Data[i-1]["id"].(string) < all.Data[i]["id"].(string) {
			t.Fatalf("not newest first: %v", actions(all))
		}
	}

	since := url.QueryEscape(start.Add(time.Second).Format(time.RFC3339Nano))
	for _, tt := range []struct {
		query string
		want  []string
	}{
		{"action=risk.updated", []string{"risk.updated", "risk.updated", "risk.updated"}},
		{"targetId=" + id, []string{"risk.updated", "risk.updated", "risk.updated", "risk.created"}},
		{"actorId=" + a.UserID + "&action=risk.updated", []string{"risk.updated", "risk.updated", "risk.updated"}},
		{"actorId=" + a.KeyID, []string{"risk.created"}},
		{"since=" + since, []string{"risk.updated", "risk.updated", "risk.updated"}},
		{"until=" + since + "&action=risk.created", []string{"risk.created"}},
	} {
		if got := actions(getPage(t, env, a.Token, "/v1/audit-log?"+tt.query)); !slices.Equal(got, tt.want) {
			t.Errorf("?%s: %v, want %v", tt.query, got, tt.want)
		}
	}
	for _, q := range []string{"action=risk.exploded", "since=yesterday", "cursor=bm9wZQ", "limit=101"} {
		env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/audit-log?" + q, Bearer: a.Token}).
			ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	}
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/audit-log/export?format=xml", Bearer: a.Token}).
		ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")

	nd := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/audit-log/export?format=ndjson", Bearer: a.Key}).
		Expect(http.StatusOK)
	if ct := nd.Header().Get("Content-Type"); ct != "application/x-ndjson" {
		t.Errorf("NDJSON Content-Type %q", ct)
	}
	var lines []map[string]any
	sc := bufio.NewScanner(nd.Body)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("NDJSON line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if jsonOf(t, lines) != jsonOf(t, all.Data) {
		t.Errorf("NDJSON export differs from the log:\n%s\n%s", jsonOf(t, lines), jsonOf(t, all.Data))
	}
	cs := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/audit-log/export?format=csv&action=risk.updated",
		Bearer: a.Token}).Expect(http.StatusOK)
	recs, err := csv.NewReader(cs.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 || recs[0][0] != "id" || recs[1][5] != "risk.updated" || recs[1][8] != `{"title":{"from":"v3","to":"v4"}}` {
		t.Errorf("CSV export: %q", recs)
	}
}

// TestRolledBackRefusedAndReplayedWritesRecordNothing: a keyed create records one
// entry; its replay, a reuse of its key, a refused write and a write whose unit of
// work rolled back after the change was recorded add none.
func TestRolledBackRefusedAndReplayedWritesRecordNothing(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := newAdmin(t, env, "Acme")
	mark := lastID(t, env, a.ID)
	keyed := func(k string, body map[string]any) apitest.Request {
		return apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key,
			Header: http.Header{"Idempotency-Key": {k}}, JSON: body}
	}
	env.Do(keyed("create-1", map[string]any{"title": "once"})).Expect(http.StatusCreated)
	if env.Do(keyed("create-1", map[string]any{"title": "once"})).Expect(http.StatusCreated).Header().Get("Idempotent-Replayed") != "true" {
		t.Fatal("not a replay")
	}
	env.Do(keyed("create-1", map[string]any{"title": "other"})).ExpectProblem(http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	env.Do(keyed("create-2", map[string]any{"title": ""})).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/users/usr_0193b2c4d5e67f8091a2b3c4d5e6f708", Bearer: a.Token,
		JSON: map[string]string{"role": "admin"}}).ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	undo := apitest.FailCompleting(t, env.App.DB, "rolled-back-1")
	env.Do(keyed("rolled-back-1", map[string]any{"title": "never"})).ExpectProblem(http.StatusServiceUnavailable, "STORE_UNAVAILABLE")
	undo()
	got := entriesAfter(t, env, a.ID, mark)
	if len(got) != 1 || got[0].Action != "risk.created" || got[0].Changes["title"].To == nil ||
		string(got[0].Changes["title"].To) != `"once"` {
		t.Fatalf("entries: %s, want the one risk.created of title once", jsonOf(t, got))
	}
}

// TestRefusedSignInIsRecorded: a wrong password for one of the tenant's users
// records session.failed (committed although the request is refused); an unknown
// email records nothing anywhere.
func TestRefusedSignInIsRecorded(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := newAdmin(t, env, "Acme")
	mark := lastID(t, env, a.ID)
	var total int64
	count := func() int64 {
		if err := env.App.DB.DB.Raw("SELECT COUNT(*) FROM audit_log").Scan(&total).Error; err != nil {
			t.Fatal(err)
		}
		return total
	}
	res := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/sessions", Header: ua,
		JSON: map[string]string{"email": a.Email, "password": "Marker-Wrong-Pa55"}}).ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
	env.App.Sessions.Wait() // recorded off the request's path
	got := entriesAfter(t, env, a.ID, mark)
	check(t, res, want{action: "session.failed", actorType: "user", actorID: a.UserID, email: a.Email}, got)
	if got[0].Target.ID != "" || got[0].Changes != nil {
		t.Errorf("session.failed names target %q and changes %v", got[0].Target.ID, got[0].Changes)
	}
	before := count()
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/sessions",
		JSON: map[string]string{"email": "nobody@example.com", "password": "whatever-1"}}).ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
	env.App.Sessions.Wait()
	if count() != before {
		t.Error("a sign-in with an unknown email was recorded")
	}
	assertNoSecrets(t, env, []string{"Marker-Wrong-Pa55", a.Password}, 1)
}

// TestAddressHonoursTrustedProxies: behind a proxy listed in TRUSTED_PROXIES the
// entry's ip is the client X-Forwarded-For names; from anywhere else, or without
// TRUSTED_PROXIES, the header is ignored.
func TestAddressHonoursTrustedProxies(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, proxies, remote, want string
	}{
		{"trusted proxy", "10.0.0.0/8", "10.1.2.3:4000", "203.0.113.7"},
		{"untrusted hop", "10.0.0.0/8", "198.51.100.9:4000", "198.51.100.9"},
		{"no proxies configured", "", "10.1.2.3:4000", "10.1.2.3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := apitest.New(t, func(c *config.Config) {
				if tt.proxies != "" {
					_, n, err := net.ParseCIDR(tt.proxies)
					if err != nil {
						t.Fatal(err)
					}
					c.HTTP.TrustedProxies = []*net.IPNet{n}
				}
			})
			a := newAdmin(t, env, "Acme")
			mark := lastID(t, env, a.ID)
			req := httptest.NewRequest(http.MethodPost, "/v2/risks", strings.NewReader(`{"title":"proxied"}`))
			req.RemoteAddr = tt.remote
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+a.Key)
			req.Header.Set("X-Forwarded-For", "203.0.113.7")
			rec := httptest.NewRecorder()
			env.App.Echo.ServeHTTP(rec, req)
			if rec.Code != http.StatusCreated {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			got := entriesAfter(t, env, a.ID, mark)
			if len(got) != 1 || got[0].IP != tt.want {
				t.Fatalf("entries %s, want one with ip %s", jsonOf(t, got), tt.want)
			}
		})
	}
}

// TestCommandsAreRecordedAsSystem: what the CLI does (through the services, with no
// request) is recorded with actor system and no request fields; disabling a
// disabled tenant records nothing; a key the CLI creates says so in the key list.
func TestCommandsAreRecordedAsSystem(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := newAdmin(t, env, "Acme")
	mark := lastID(t, env, a.ID)
	ctx := context.Background()
	svc := env.App.Tenants
	for _, disabled := range []bool{true, true, false} {
		if err := svc.SetTenantDisabled(ctx, a.ID, disabled); err != nil {
			t.Fatal(err)
		}
	}
	k, _, err := svc.CreateAPIKey(ctx, a.ID, "from the CLI", []tenants.Scope{tenants.ScopeRisksRead})
	if err != nil {
		t.Fatal(err)
	}
	got := entriesAfter(t, env, a.ID, mark)
	var acts []string
	for _, e := range got {
		acts = append(acts, e.Action)
		if e.Actor.Type != "system" || e.Actor.ID != "" || e.RequestID != "" || e.IP != "" || e.UserAgent != "" {
			t.Errorf("a command's entry %s", jsonOf(t, e))
		}
	}
	if !slices.Equal(acts, []string{"tenant.disabled", "tenant.enabled", "api_key.created"}) {
		t.Fatalf("actions %v", acts)
	}
	if c := jsonOf(t, got[0].Changes); c != `{"disabled":{"from":false,"to":true}}` || got[0].Target.ID != a.ID {
		t.Errorf("tenant.disabled: target %s, changes %s", got[0].Target.ID, c)
	}
	keys := getPage(t, env, a.Token, "/v1/api-keys?limit=100")
	for _, kv := range keys.Data {
		if kv["id"] == k.ID && jsonOf(t, kv["createdBy"]) != `{"id":"","type":"system"}` {
			t.Errorf("key made by the CLI lists createdBy %v", kv["createdBy"])
		}
	}
}

// TestRemovedAdminsKeysKeepWorkingAndSayWhose: an API key outlives the admin who
// created it (it is the tenant's credential, not the user's), and the key list and
// the log still say who created it.
func TestRemovedAdminsKeysKeepWorkingAndSayWhose(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := newAdmin(t, env, "Acme")
	other := env.User(a.ID, tenants.RoleAdmin)
	var k struct{ ID, Key string }
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Bearer: other.Token,
		JSON: map[string]any{"scopes": []string{"risks:read"}}}).Expect(http.StatusCreated).Decode(&k)
	env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v1/users/" + other.ID, Bearer: a.Token}).Expect(http.StatusNoContent)
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks", Bearer: k.Key}).Expect(http.StatusOK)
	for _, kv := range getPage(t, env, a.Token, "/v1/api-keys?limit=100").Data {
		if kv["id"] == k.ID && jsonOf(t, kv["createdBy"]) != `{"id":"`+other.ID+`","type":"user"}` {
			t.Errorf("createdBy %v, want the removed admin %s", kv["createdBy"], other.ID)
		}
	}
	p := getPage(t, env, a.Token, "/v1/audit-log?action=api_key.created&actorId="+other.ID)
	if len(p.Data) != 1 || p.Data[0]["actor"].(map[string]any)["email"] != other.Email {
		t.Errorf("the log of the key's creation: %v", p.Data)
	}
}
