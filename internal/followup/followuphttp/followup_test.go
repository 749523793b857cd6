package followuphttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/apiversion"
	"github.com/riskapi/riskapi/internal/tenants"
)

func newRisk(t *testing.T, env *apitest.Env, key string, body map[string]any) string {
	t.Helper()
	var r struct{ ID string }
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: key, JSON: body}).Expect(http.StatusCreated).Decode(&r)
	return r.ID
}

func getRisk(t *testing.T, env *apitest.Env, key, id string) map[string]any {
	t.Helper()
	return env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + id, Bearer: key}).Expect(http.StatusOK).Map()
}

// eventsOfType lists the tenant's events of typ, newest first.
func eventsOfType(t *testing.T, env *apitest.Env, key, typ string) []map[string]any {
	t.Helper()
	var page struct{ Data []map[string]any }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/events?limit=100&type=" + typ, Bearer: key}).Expect(http.StatusOK).Decode(&page)
	return page.Data
}

func today(env *apitest.Env) time.Time {
	y, m, d := env.Clock.Now().UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// TestReviewMovesReviewDateByCadence: a review records who reviewed and moves
// reviewDate to today + reviewEvery; the list is newest first; without a cadence the
// date is cleared; it emits review.created and risk.updated.
func TestReviewMovesReviewDateByCadence(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	id := newRisk(t, env, a.Key, map[string]any{"title": "t", "reviewEvery": "P3M", "reviewDate": "2020-01-01"})
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + id + "/reviews", Bearer: a.Key,
		JSON: map[string]any{"note": "looked", "outcome": "sideways"}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	rv := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + id + "/reviews", Bearer: a.Key,
		JSON: map[string]any{"note": "looked", "outcome": "unchanged"}}).Expect(http.StatusCreated).Map()
	want := today(env).AddDate(0, 3, 0).Format("2006-01-02")
	if rv["nextReviewDate"] != want || rv["reviewer"].(map[string]any)["type"] != "api_key" {
		t.Errorf("review = %v, want nextReviewDate %s by the api_key", rv, want)
	}
	r := getRisk(t, env, a.Key, id)
	if r["reviewDate"] != want || r["version"] != float64(2) {
		t.Errorf("risk after review: reviewDate %v version %v, want %s, 2", r["reviewDate"], r["version"], want)
	}
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + id + "/reviews", Bearer: a.Key,
		JSON: map[string]any{"note": "again", "outcome": "changed"}}).Expect(http.StatusCreated)
	var page struct{ Data []map[string]any }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + id + "/reviews", Bearer: a.ReadKey}).Expect(http.StatusOK).Decode(&page)
	if len(page.Data) != 2 || page.Data[0]["note"] != "again" {
		t.Errorf("reviews = %v, want 2, newest first", page.Data)
	}
	if n := len(eventsOfType(t, env, a.Key, "review.created")); n != 2 {
		t.Errorf("%d review.created events, want 2", n)
	}
	// No cadence: the review leaves no date behind it.
	plain := newRisk(t, env, a.Key, map[string]any{"title": "p", "reviewDate": "2020-01-01"})
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + plain + "/reviews", Bearer: a.Key,
		JSON: map[string]any{"outcome": "unchanged"}}).Expect(http.StatusCreated)
	if r := getRisk(t, env, a.Key, plain); r["reviewDate"] != nil {
		t.Errorf("reviewDate after a review without cadence = %v, want null", r["reviewDate"])
	}
	env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + plain, Bearer: a.Key,
		JSON: map[string]any{"reviewEvery": "P2W"}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	// Another tenant's risk is not found.
	b := env.Tenant("Other")
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + id + "/reviews", Bearer: b.Key,
		JSON: map[string]any{"outcome": "unchanged"}}).ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + id + "/reviews", Bearer: b.Key}).ExpectProblem(http.StatusNotFound, "NOT_FOUND")
}

// TestActions: an owner must be a user of the tenant; PATCH honours If-Match and
// counts versions; the list filters by owner, status and due date.
func TestActions(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	t.Cleanup(func() {
		if t.Failed() {
			for _, l := range strings.Split(env.LogText(), "\n") {
				if strings.Contains(l, `"ERROR"`) {
					t.Log(l)
				}
			}
		}
	})
	a, b := env.Tenant("Acme"), env.Tenant("Other")
	owner := env.User(a.ID, tenants.RoleMember)
	stranger := env.User(b.ID, tenants.RoleMember)
	id := newRisk(t, env, a.Key, map[string]any{"title": "t"})
	path := "/v2/risks/" + id + "/actions"
	res := env.Do(apitest.Request{Method: http.MethodPost, Path: path, Bearer: a.Key,
		JSON: map[string]any{"title": "patch it", "ownerId": stranger.ID, "dueDate": "2030-01-01"}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	if !strings.Contains(res.Body.String(), `"ownerId"`) {
		t.Errorf("another tenant's user as owner: %s, want ownerId named", res.Body)
	}
	act := env.Do(apitest.Request{Method: http.MethodPost, Path: path, Bearer: a.Key,
		JSON: map[string]any{"title": "patch it", "ownerId": owner.ID, "dueDate": "2030-01-01"}}).Expect(http.StatusCreated)
	if act.Header().Get("ETag") != `"1"` {
		t.Errorf("ETag %q, want \"1\"", act.Header().Get("ETag"))
	}
	actID := act.Map()["id"].(string)
	item := "/v2/actions/" + actID
	env.Do(apitest.Request{Method: http.MethodPatch, Path: item, Bearer: a.Key, Header: http.Header{"If-Match": {`"1"`}},
		JSON: map[string]any{"status": "done"}}).Expect(http.StatusOK)
	stale := env.Do(apitest.Request{Method: http.MethodPatch, Path: item, Bearer: a.Key, Header: http.Header{"If-Match": {`"1"`}},
		JSON: map[string]any{"title": "lost"}}).ExpectProblem(http.StatusPreconditionFailed, "PRECONDITION_FAILED").Map()
	if cur := stale["current"].(map[string]any); cur["status"] != "done" || cur["version"] != float64(2) {
		t.Errorf("412 current = %v, want the action as stored (done, version 2)", cur)
	}
	if v := env.Do(apitest.Request{Method: http.MethodPatch, Path: item, Bearer: a.Key,
		JSON: map[string]any{"status": "done"}}).Expect(http.StatusOK).Map()["version"]; v != float64(2) {
		t.Errorf("a PATCH that changes nothing moved the version to %v", v)
	}
	env.Do(apitest.Request{Method: http.MethodPost, Path: path, Bearer: a.Key,
		JSON: map[string]any{"title": "second", "ownerId": owner.ID, "dueDate": "2020-01-01"}}).Expect(http.StatusCreated)
	list := func(q string) int {
		var page struct{ Data []map[string]any }
		env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/actions?" + q, Bearer: a.ReadKey}).Expect(http.StatusOK).Decode(&page)
		return len(page.Data)
	}
	for q, want := range map[string]int{"ownerId=" + owner.ID: 2, "status=open": 1, "status=done": 1, "dueBefore=2025-01-01": 1, "ownerId=" + stranger.ID: 0} {
		if got := list(q); got != want {
			t.Errorf("GET /v2/actions?%s: %d actions, want %d", q, got, want)
		}
	}
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/actions?colour=red", Bearer: a.Key}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/actions/" + actID, Bearer: b.Key}).ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	env.Do(apitest.Request{Method: http.MethodPatch, Path: item, Bearer: b.Key, JSON: map[string]any{"title": "x"}}).ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	if n := len(eventsOfType(t, env, a.Key, "action.updated")); n != 1 {
		t.Errorf("%d action.updated events, want 1 (a PATCH that changes nothing emits none)", n)
	}
}

// TestAcceptanceSignOff: the requester cannot decide; another admin approves, which
// sets treatment accept and keeps the risk as it was; a decided acceptance stays
// decided; validUntil is within a year; API keys cannot decide.
func TestAcceptanceSignOff(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	requester := env.User(a.ID, tenants.RoleAdmin)
	approver := env.User(a.ID, tenants.RoleAdmin)
	member := env.User(a.ID, tenants.RoleMember)
	id := newRisk(t, env, a.Key, map[string]any{"title": "t", "treatment": "mitigate", "owner": "ann"})
	path := "/v1/risks/" + id + "/acceptances"
	tooLate := today(env).AddDate(1, 0, 1).Format("2006-01-02")
	env.Do(apitest.Request{Method: http.MethodPost, Path: path, Bearer: requester.Token,
		JSON: map[string]any{"justification": "cheap", "validUntil": tooLate}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	until := today(env).AddDate(0, 6, 0).Format("2006-01-02")
	acc := env.Do(apitest.Request{Method: http.MethodPost, Path: path, Bearer: requester.Token,
		JSON: map[string]any{"justification": "cheap", "validUntil": until}}).Expect(http.StatusCreated).Map()
	if acc["status"] != "pending" || acc["requestedBy"].(map[string]any)["id"] != requester.ID {
		t.Fatalf("acceptance = %v, want pending, requested by the caller", acc)
	}
	accID := acc["id"].(string)
	decide := func(token, verb string) *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/acceptances/" + accID + "/" + verb, Bearer: token,
			JSON: map[string]any{"note": "ok"}})
	}
	decide(requester.Token, "approve").ExpectProblem(http.StatusForbidden, "SELF_APPROVAL")
	decide(member.Token, "approve").ExpectProblem(http.StatusForbidden, "FORBIDDEN")
	// No decision under /v2: the router answers 405 (its Allow names the GET of
	// /v2/acceptances/{id}, the nearest path it knows).
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/acceptances/" + accID + "/approve", Bearer: a.Key,
		JSON: map[string]any{"note": "ok"}}).Expect(http.StatusMethodNotAllowed)
	got := decide(approver.Token, "approve").Expect(http.StatusOK).Map()
	snap, _ := got["riskSnapshot"].(map[string]any)
	if got["status"] != "approved" || got["decidedBy"].(map[string]any)["id"] != approver.ID || snap["treatment"] != "mitigate" {
		t.Errorf("approved = %v, want approved by the approver, snapshot of the risk as decided on", got)
	}
	if r := getRisk(t, env, a.Key, id); r["treatment"] != "accept" {
		t.Errorf("treatment after approval = %v, want accept", r["treatment"])
	}
	decide(approver.Token, "reject").ExpectProblem(http.StatusConflict, "ACCEPTANCE_DECIDED")
	var page struct{ Data []map[string]any }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/acceptances?status=approved", Bearer: a.ReadKey}).Expect(http.StatusOK).Decode(&page)
	if len(page.Data) != 1 {
		t.Errorf("approved acceptances: %d, want 1", len(page.Data))
	}
	if n := len(eventsOfType(t, env, a.Key, "acceptance.approved")); n != 1 {
		t.Errorf("%d acceptance.approved events, want 1", n)
	}
	// The snapshot is a risk, in the request's version (docs/api-versions.md): the
	// tenant's pin 2026-12-01 reads the owner as a string, 2027-01-15 as an object.
	if snap["owner"] != "ann" {
		t.Errorf("snapshot owner in 2026-12-01 = %v, want \"ann\"", snap["owner"])
	}
	var newest struct{ Data []map[string]any }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/acceptances?status=approved", Bearer: a.ReadKey,
		Header: http.Header{"Riskapi-Version": {"2027-01-15"}}}).Expect(http.StatusOK).Decode(&newest)
	if len(newest.Data) == 1 {
		if o, _ := newest.Data[0]["riskSnapshot"].(map[string]any)["owner"].(map[string]any); o == nil || o["name"] != "ann" {
			t.Errorf("snapshot owner in 2027-01-15 = %v, want the name owner object", newest.Data[0]["riskSnapshot"])
		}
	}
	var evs struct{ Data []map[string]any }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/events?type=acceptance.approved", Bearer: a.Key}).
		Expect(http.StatusOK).Decode(&evs)
	if len(evs.Data) == 1 {
		obj := evs.Data[0]["data"].(map[string]any)["object"].(map[string]any)
		if owner := obj["riskSnapshot"].(map[string]any)["owner"]; owner != "ann" {
			t.Errorf("acceptance.approved in 2026-12-01 shows the snapshot's owner as %v, want \"ann\"", owner)
		}
	}
}

// TestDueNoticesOnce: each due item gets its notice once however many runs (two
// instances' included) look; a moved date is a new notice; an expired acceptance
// puts the treatment back to null.
func TestDueNoticesOnce(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	twin := env.Twin()
	a := env.Tenant("Acme")
	owner := env.User(a.ID, tenants.RoleAdmin)
	other := env.User(a.ID, tenants.RoleAdmin)
	day := today(env)
	date := func(days int) string { return day.AddDate(0, 0, days).Format("2006-01-02") }
	dueSoon := newRisk(t, env, a.Key, map[string]any{"title": "soon", "reviewDate": date(3)})
	overdue := newRisk(t, env, a.Key, map[string]any{"title": "late", "reviewDate": date(-2)})
	newRisk(t, env, a.Key, map[string]any{"title": "far", "reviewDate": date(30)})
	newRisk(t, env, a.Key, map[string]any{"title": "closed", "reviewDate": date(-2), "status": "closed"})
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + dueSoon + "/actions", Bearer: a.Key,
		JSON: map[string]any{"title": "late task", "ownerId": owner.ID, "dueDate": date(-1)}}).Expect(http.StatusCreated)
	acc := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/risks/" + overdue + "/acceptances", Bearer: owner.Token,
		JSON: map[string]any{"justification": "j", "validUntil": date(10)}}).Expect(http.StatusCreated).Map()
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/acceptances/" + acc["id"].(string) + "/approve", Bearer: other.Token,
		JSON: map[string]any{}}).Expect(http.StatusOK)

	ctx := context.Background()
	run := func(e *apitest.Env) {
		if _, err := e.App.Due.Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	go func() { run(twin); close(done) }()
	run(env)
	<-done
	run(env)
	counts := func() map[string]int {
		out := map[string]int{}
		for _, typ := range []string{"risk.review_due", "risk.review_overdue", "action.overdue", "acceptance.expiring", "acceptance.expired"} {
			out[typ] = len(eventsOfType(t, env, a.Key, typ))
		}
		return out
	}
	want := map[string]int{"risk.review_due": 1, "risk.review_overdue": 1, "action.overdue": 1, "acceptance.expiring": 1, "acceptance.expired": 0}
	if got := counts(); !equal(got, want) {
		t.Errorf("after three runs, two at once: %v, want %v", got, want)
	}
	ev := eventsOfType(t, env, a.Key, "risk.review_due")[0]
	if obj := ev["data"].(map[string]any)["object"].(map[string]any); obj["id"] != dueSoon {
		t.Errorf("review_due is about %v, want %s", obj["id"], dueSoon)
	}
	// A moved date makes a new notice due; the old one is not repeated.
	env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + dueSoon, Bearer: a.Key,
		JSON: map[string]any{"reviewDate": date(4)}}).Expect(http.StatusOK)
	run(twin)
	want["risk.review_due"] = 2
	if got := counts(); !equal(got, want) {
		t.Errorf("after moving a review date: %v, want %v", got, want)
	}
	// Eleven days on, the acceptance has expired: once, and the treatment is null.
	env.Clock.Advance(11 * 24 * time.Hour)
	run(env)
	run(twin)
	if got := counts()["acceptance.expired"]; got != 1 {
		t.Errorf("%d acceptance.expired events, want 1", got)
	}
	if r := getRisk(t, env, a.Key, overdue); r["treatment"] != nil {
		t.Errorf("treatment after expiry = %v, want null", r["treatment"])
	}
	var page struct{ Data []map[string]any }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/acceptances?status=expired", Bearer: a.Key}).Expect(http.StatusOK).Decode(&page)
	if len(page.Data) != 1 {
		t.Errorf("%d expired acceptances, want 1", len(page.Data))
	}
	raw, _ := json.Marshal(ev)
	if !strings.Contains(string(raw), `"id":"evt_`) {
		t.Errorf("event %s has no evt_ id", raw)
	}
	// Each kind, and the writes before them, are typed in docs/openapi.yaml (which
	// describes the newest version): their listings match the spec's Event.
	spec := apitest.LoadSpec(t, "../../../docs/openapi.yaml")
	newest := http.Header{apiversion.Header: {string(apiversion.API.Newest())}}
	for _, typ := range []string{"risk.review_due", "risk.review_overdue", "action.overdue", "acceptance.expiring", "acceptance.expired",
		"action.created", "acceptance.created", "acceptance.approved"} {
		path := "/v2/events?limit=100&type=" + typ
		res := env.Do(apitest.Request{Method: http.MethodGet, Path: path, Bearer: a.Key, Header: newest}).Expect(http.StatusOK)
		if !strings.Contains(res.Body.String(), `"type":"`+typ+`"`) {
			t.Errorf("no %s event listed to check", typ)
		}
		spec.Check(t, http.MethodGet, path, newest, res)
	}
}

func equal(a, b map[string]int) bool {
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return len(a) == len(b)
}

// TestActionOfDeletedOwnerStaysEditable: an action shows its owner's email, to a
// member too (who may not list users); once its owner's user is deleted, the action
// keeps that ownerId and email, and a PATCH that does not name ownerId still
// succeeds; naming the deleted user as ownerId is refused; naming another user
// shows theirs.
func TestActionOfDeletedOwnerStaysEditable(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	admin := env.User(a.ID, tenants.RoleAdmin)
	owner := env.User(a.ID, tenants.RoleMember)
	colleague := env.User(a.ID, tenants.RoleMember)
	id := newRisk(t, env, a.Key, map[string]any{"title": "t"})
	actID := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + id + "/actions", Bearer: a.Key,
		JSON: map[string]any{"title": "a", "ownerId": owner.ID}}).Expect(http.StatusCreated).Map()["id"].(string)
	var listed struct{ Data []map[string]any }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/risks/" + id + "/actions", Bearer: colleague.Token}).
		Expect(http.StatusOK).Decode(&listed)
	if len(listed.Data) != 1 || listed.Data[0]["ownerEmail"] != owner.Email {
		t.Errorf("a member's list of the risk's actions: %v, want ownerEmail %s", listed.Data, owner.Email)
	}
	env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v1/users/" + owner.ID, Bearer: admin.Token}).Expect(http.StatusNoContent)
	item := "/v2/actions/" + actID
	got := env.Do(apitest.Request{Method: http.MethodPatch, Path: item, Bearer: a.Key,
		JSON: map[string]any{"title": "b"}}).Expect(http.StatusOK).Map()
	if got["title"] != "b" || got["ownerId"] != owner.ID || got["ownerEmail"] != owner.Email {
		t.Errorf("after title PATCH: %v, want title b, ownerId and ownerEmail kept", got)
	}
	env.Do(apitest.Request{Method: http.MethodPatch, Path: item, Bearer: a.Key,
		JSON: map[string]any{"status": "done"}}).Expect(http.StatusOK)
	res := env.Do(apitest.Request{Method: http.MethodPatch, Path: item, Bearer: a.Key,
		JSON: map[string]any{"ownerId": owner.ID}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	if !strings.Contains(res.Body.String(), `"ownerId"`) {
		t.Errorf("deleted user named as owner: %s, want ownerId named", res.Body)
	}
	moved := env.Do(apitest.Request{Method: http.MethodPatch, Path: item, Bearer: a.Key,
		JSON: map[string]any{"ownerId": colleague.ID}}).Expect(http.StatusOK).Map()
	if moved["ownerId"] != colleague.ID || moved["ownerEmail"] != colleague.Email {
		t.Errorf("given to a colleague: %v, want their ID and email", moved)
	}
}
