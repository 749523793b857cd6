package riskhttp_test

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/apiversion"
)

// The promises of docs/api-versions.md at the edge, on the store TEST_DATABASE_URL
// names (SQLite without it).

func inVersion(v apiversion.Version) http.Header {
	return http.Header{apiversion.Header: {string(v)}}
}

// userID is the ID of tenant's user, read from GET /v1/me.
// pinner returns a call that asks to move tenant's API version pin to version, as
// its admin, from the dashboard's session route.
func pinner(t *testing.T, env *apitest.Env, tenant *apitest.Tenant) func(version string) *apitest.Response {
	return func(version string) *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/tenant/api-version",
			Bearer: apitest.Login(t, env, tenant).Token, JSON: map[string]any{"version": version}})
	}
}

func userID(t *testing.T, env *apitest.Env, tenant *apitest.Tenant) string {
	t.Helper()
	var me struct {
		User struct{ ID string } `json:"user"`
	}
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/me", Bearer: apitest.Login(t, env, tenant).Token}).
		Expect(http.StatusOK).Decode(&me)
	return me.User.ID
}

// TestOldAndNewClientsShareRisks: a 2026-12-01 client and a 2027-01-15 client write
// and read the same risks, each in its own shape: a string written old is a name
// owner; a user owner reads old as the user's email; a list, a PATCH answer and the
// tenant's events are each in the request's version; ownerId= finds user owners.
func TestOldAndNewClientsShareRisks(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.TenantAt("Acme", apiversion.V20270115)
	old, cur := inVersion(apiversion.V20261201), inVersion(apiversion.V20270115)
	uid := userID(t, env, a)

	created := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, Header: old,
		JSON: map[string]any{"title": "old", "owner": "ann"}}).Expect(http.StatusCreated)
	if got := created.Header().Get(apiversion.Header); got != string(apiversion.V20261201) {
		t.Errorf("answer's %s = %q", apiversion.Header, got)
	}
	oldRisk := created.Map()
	if oldRisk["owner"] != "ann" {
		t.Errorf("old client reads its own write's owner as %v", oldRisk["owner"])
	}
	id := oldRisk["id"].(string)
	newView := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + id, Bearer: a.Key}).Expect(http.StatusOK)
	if got := newView.Header().Get(apiversion.Header); got != string(apiversion.V20270115) {
		t.Errorf("pinned answer's %s = %q", apiversion.Header, got)
	}
	if owner, _ := newView.Map()["owner"].(map[string]any); owner == nil || owner["name"] != "ann" || owner["userId"] != nil {
		t.Errorf("new client reads the old write's owner as %v, want a name owner", newView.Map()["owner"])
	}

	// The new client makes a user the owner; the old one reads their email.
	patched := env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + id, Bearer: a.Key, Header: cur,
		JSON: map[string]any{"owner": map[string]any{"userId": uid}}}).Expect(http.StatusOK).Map()
	if owner, _ := patched["owner"].(map[string]any); owner == nil || owner["userId"] != uid || owner["name"] != a.Email {
		t.Errorf("user owner answered as %v", patched["owner"])
	}
	oldRead := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + id, Bearer: a.Key, Header: old}).
		Expect(http.StatusOK).Map()
	if oldRead["owner"] != a.Email {
		t.Errorf("old client reads a user owner as %v, want %s", oldRead["owner"], a.Email)
	}
	var oldList struct{ Data []map[string]any }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks?ownerId=" + uid, Bearer: a.Key, Header: old}).
		Expect(http.StatusOK).Decode(&oldList)
	if len(oldList.Data) != 1 || oldList.Data[0]["owner"] != a.Email {
		t.Errorf("ownerId= in 2026-12-01: %v", oldList.Data)
	}
	var events struct {
		Data []struct {
			Type string
			Data struct {
				Object             map[string]any
				PreviousAttributes map[string]any
			}
		}
	}
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/events?type=risk.updated", Bearer: a.Key, Header: old}).
		Expect(http.StatusOK).Decode(&events)
	if len(events.Data) != 1 || events.Data[0].Data.Object["owner"] != a.Email || events.Data[0].Data.PreviousAttributes["owner"] != "ann" {
		t.Errorf("risk.updated in 2026-12-01: %+v", events.Data)
	}

	// Each version refuses the other's shape; an unknown user is refused.
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, Header: old,
		JSON: map[string]any{"title": "t", "owner": map[string]any{"name": "ann"}}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, Header: cur,
		JSON: map[string]any{"title": "t", "owner": "ann"}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	other := env.TenantAt("Other", apiversion.V20270115)
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, Header: cur,
		JSON: map[string]any{"title": "t", "owner": map[string]any{"userId": userID(t, env, other)}}}).
		ExpectProblem(http.StatusBadRequest, "OWNER_USER_UNKNOWN")
}

// TestUnknownVersionIsRefused: a version no one released is 400 before anything
// else, and names itself in no answer.
func TestUnknownVersionIsRefused(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	for _, bearer := range []string{a.Key, "rk_not_a_key"} {
		res := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks", Bearer: bearer,
			Header: http.Header{apiversion.Header: {"2026-13-01"}}}).ExpectProblem(http.StatusBadRequest, "API_VERSION_UNKNOWN")
		if res.Header().Get(apiversion.Header) != "" {
			t.Errorf("a refused version is answered with %s %q", apiversion.Header, res.Header().Get(apiversion.Header))
		}
	}
}

// TestKeyReusedAcrossVersionsIsRefused: the same key and body in two versions are
// two requests (422); a replay in the first answers its first bytes.
func TestKeyReusedAcrossVersionsIsRefused(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.TenantAt("Acme", apiversion.V20270115)
	body := map[string]any{"title": "t"}
	key := func(v apiversion.Version) http.Header {
		h := inVersion(v)
		h.Set("Idempotency-Key", "versions-key-1")
		return h
	}
	first := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, Header: key(apiversion.V20261201), JSON: body}).
		Expect(http.StatusCreated)
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, Header: key(apiversion.V20270115), JSON: body}).
		ExpectProblem(http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	replay := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, Header: key(apiversion.V20261201), JSON: body}).
		Expect(http.StatusCreated)
	if replay.Body.String() != first.Body.String() {
		t.Errorf("replay answered\n%s\nnot the first bytes\n%s", replay.Body, first.Body)
	}
}

// TestPinMovesAndRollsBack: an existing tenant (2026-12-01) moves to 2027-01-15 and
// its unversioned requests follow; it may move back once within 72 h; a tenant
// created on the newest may not move back at all, nor a move past 72 h.
func TestPinMovesAndRollsBack(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	pin := pinner(t, env, a)
	unversioned := func() string {
		return env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks", Bearer: a.Key}).Expect(http.StatusOK).
			Header().Get(apiversion.Header)
	}
	if got := unversioned(); got != "2026-12-01" {
		t.Fatalf("pin before = %s", got)
	}
	moved := pin("2027-01-15").Expect(http.StatusOK).Map()
	if moved["apiVersion"] != "2027-01-15" || moved["rollback"].(map[string]any)["version"] != "2026-12-01" {
		t.Errorf("moved: %v", moved)
	}
	if got := unversioned(); got != "2027-01-15" {
		t.Errorf("pin after the move = %s", got)
	}
	back := pin("2026-12-01").Expect(http.StatusOK).Map()
	if back["apiVersion"] != "2026-12-01" || back["rollback"] != nil {
		t.Errorf("rolled back: %v", back)
	}
	pin("2027-01-15").Expect(http.StatusOK)
	env.Clock.Advance(73 * time.Hour)
	pin("2026-12-01").ExpectProblem(http.StatusBadRequest, "API_VERSION_MOVE_REFUSED")
	pin("2027-13-01").ExpectProblem(http.StatusBadRequest, "API_VERSION_UNKNOWN")

	n := env.TenantAt("New", apiversion.API.Newest())
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/tenant/api-version", Bearer: apitest.Login(t, env, n).Token,
		JSON: map[string]any{"version": "2026-12-01"}}).ExpectProblem(http.StatusBadRequest, "API_VERSION_MOVE_REFUSED")
	got := map[string]any{}
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/tenant", Bearer: apitest.Login(t, env, n).Token}).
		Expect(http.StatusOK).Decode(&got)
	if got["apiVersion"] != string(apiversion.API.Newest()) {
		t.Errorf("a new tenant's pin: %v", got)
	}
}

// TestPinRollbackWindowIsEachMoves: the move back is allowed within 72 h of the last
// move, to the version it replaced, once (docs/api-versions.md): naming the pin it
// already is moves nothing and opens no window, so 73 h after the move the move back
// is refused however often the pin was re-sent; a new move forward after a move back
// is a move like any other, with its own window and its own one move back.
func TestPinRollbackWindowIsEachMoves(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	pin := pinner(t, env, a)
	rollback := func(m map[string]any) any { return m["rollback"] }
	first := rollback(pin("2027-01-15").Expect(http.StatusOK).Map())
	env.Clock.Advance(70 * time.Hour)
	if again := rollback(pin("2027-01-15").Expect(http.StatusOK).Map()); !reflect.DeepEqual(again, first) {
		t.Errorf("re-sending the pin moved its window: %v, was %v", again, first)
	}
	env.Clock.Advance(3 * time.Hour)
	pin("2026-12-01").ExpectProblem(http.StatusBadRequest, "API_VERSION_MOVE_REFUSED")
	if got := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/tenant", Bearer: apitest.Login(t, env, a).Token}).
		Expect(http.StatusOK).Map(); got["rollback"] != nil {
		t.Errorf("73 h after the move, GET /v1/tenant still offers %v", got["rollback"])
	}

	b := env.Tenant("Beta")
	pinB := func(version string) *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/tenant/api-version",
			Bearer: apitest.Login(t, env, b).Token, JSON: map[string]any{"version": version}})
	}
	pinB("2027-01-15").Expect(http.StatusOK)
	pinB("2026-12-01").Expect(http.StatusOK)
	env.Clock.Advance(time.Hour)
	moved := pinB("2027-01-15").Expect(http.StatusOK).Map()
	rb, _ := moved["rollback"].(map[string]any)
	if rb == nil || rb["version"] != "2026-12-01" {
		t.Fatalf("a move forward after a move back offers no move back: %v", moved)
	}
	if back := pinB("2026-12-01").Expect(http.StatusOK).Map(); back["apiVersion"] != "2026-12-01" || back["rollback"] != nil {
		t.Errorf("moved back: %v", back)
	}
}

// TestRequestLogRecordsTheVersion: each request's version is logged, and the log
// filters by it.
func TestRequestLogRecordsTheVersion(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.TenantAt("Acme", apiversion.V20270115)
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks", Bearer: a.Key, Header: inVersion(apiversion.V20261201)}).Expect(http.StatusOK)
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks?limit=5", Bearer: a.Key}).Expect(http.StatusOK)
	if err := env.App.RequestLog.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for v, want := range map[apiversion.Version]string{apiversion.V20261201: "/v2/risks", apiversion.V20270115: "/v2/risks"} {
		var page struct{ Data []map[string]any }
		env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/requests?apiVersion=" + string(v) + "&method=GET", Bearer: a.Key}).
			Expect(http.StatusOK).Decode(&page)
		var got []any
		for _, e := range page.Data {
			if e["path"] == want {
				got = append(got, e["apiVersion"])
			}
		}
		if len(got) != 1 || got[0] != string(v) {
			t.Errorf("?apiVersion=%s lists %v", v, got)
		}
	}
}

// TestEveryAnswerNamesItsVersion: answers no route's chain versions — the router's
// 404, a 401 without credentials — still say which version they are in (the one
// named, else the newest); two Riskapi-Version headers are refused, neither taken.
func TestEveryAnswerNamesItsVersion(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.TenantAt("Acme", apiversion.V20261201)
	old := http.Header{apiversion.Header: {string(apiversion.V20261201)}}
	for _, c := range []struct {
		name   string
		req    apitest.Request
		status int
		want   apiversion.Version
	}{
		{"no route", apitest.Request{Method: http.MethodGet, Path: "/v2/nothing-here", Bearer: a.Key}, http.StatusNotFound, apiversion.API.Newest()},
		{"no route, named", apitest.Request{Method: http.MethodGet, Path: "/v1/nothing-here", Header: old}, http.StatusNotFound, apiversion.V20261201},
		{"no credentials", apitest.Request{Method: http.MethodGet, Path: "/v2/risks"}, http.StatusUnauthorized, apiversion.API.Newest()},
		{"no credentials, named", apitest.Request{Method: http.MethodGet, Path: "/v1/risks", Header: old}, http.StatusUnauthorized, apiversion.V20261201},
		{"a bad key", apitest.Request{Method: http.MethodGet, Path: "/v2/risks", Bearer: "rk_live_nope"}, http.StatusUnauthorized, apiversion.API.Newest()},
		{"the pin", apitest.Request{Method: http.MethodGet, Path: "/v2/risks", Bearer: a.Key}, http.StatusOK, apiversion.V20261201},
	} {
		res := env.Do(c.req).Expect(c.status)
		if got := res.Header().Values(apiversion.Header); len(got) != 1 || got[0] != string(c.want) {
			t.Errorf("%s: %s %v, want %s", c.name, apiversion.Header, got, c.want)
		}
	}
	two := http.Header{apiversion.Header: {"2026-12-01", "2027-01-15"}}
	for _, bearer := range []string{a.Key, ""} {
		res := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: bearer, Header: two,
			JSON: map[string]any{"title": "t", "owner": "ann"}}).ExpectProblem(http.StatusBadRequest, "API_VERSION_UNKNOWN")
		if res.Header().Get(apiversion.Header) != "" || !strings.Contains(res.Body.String(), "send one") {
			t.Errorf("two versions: %s %q, %s", apiversion.Header, res.Header().Get(apiversion.Header), res.Body)
		}
	}
	var page struct{ Data []any }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks", Bearer: a.Key}).Expect(http.StatusOK).Decode(&page)
	if len(page.Data) != 0 {
		t.Errorf("a refused request wrote %d risks", len(page.Data))
	}
}

// TestOldPutOfAUserOwnerIsVisible: a 2026-12-01 client PUTting back the owner it
// read (a user's email) makes a name owner, as docs/api-versions.md says; the change
// is visible to the newest version, in the answer and in the risk.updated event's
// previousAttributes, which keep the user it was.
func TestOldPutOfAUserOwnerIsVisible(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.TenantAt("Acme", apiversion.V20270115)
	old, cur := inVersion(apiversion.V20261201), inVersion(apiversion.V20270115)
	uid := userID(t, env, a)
	id := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, Header: cur,
		JSON: map[string]any{"title": "t", "owner": map[string]any{"userId": uid}}}).Expect(http.StatusCreated).Map()["id"].(string)
	read := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + id, Bearer: a.Key, Header: old}).Expect(http.StatusOK).Map()
	env.Do(apitest.Request{Method: http.MethodPut, Path: "/v2/risks/" + id, Bearer: a.Key, Header: old,
		JSON: map[string]any{"title": read["title"], "owner": read["owner"]}}).Expect(http.StatusOK)
	now := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + id, Bearer: a.Key, Header: cur}).Expect(http.StatusOK).Map()
	if owner, _ := now["owner"].(map[string]any); owner == nil || owner["userId"] != nil || owner["name"] != a.Email {
		t.Fatalf("owner after the old PUT = %v, want the name owner %s", now["owner"], a.Email)
	}
	var events struct {
		Data []struct {
			Type string
			Data struct {
				PreviousAttributes map[string]any
			}
		}
	}
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/events?type=risk.updated", Bearer: a.Key, Header: cur}).Expect(http.StatusOK).Decode(&events)
	if len(events.Data) == 0 {
		t.Fatal("no risk.updated event")
	}
	prev, _ := events.Data[0].Data.PreviousAttributes["owner"].(map[string]any)
	if prev == nil || prev["userId"] != uid {
		t.Errorf("previousAttributes = %v, want the user owner %s", events.Data[0].Data.PreviousAttributes, uid)
	}
}
