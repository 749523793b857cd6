package riskhttp_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/dbtest"
)

// versioned is a risk with its version, as a client decodes it.
type versioned struct {
	risk
	Version int64 `json:"version"`
}

func decodeVersioned(r *apitest.Response) versioned {
	r.T.Helper()
	var v versioned
	r.Decode(&v)
	if want := fmt.Sprintf(`"%d"`, v.Version); r.Header().Get("ETag") != want {
		r.T.Fatalf("ETag = %q, want %s (the body's version)", r.Header().Get("ETag"), want)
	}
	return v
}

func ifMatch(v string) http.Header { return http.Header{"If-Match": {v}} }

// riskEvent is an event about a risk as listed by GET /v2/events.
type riskEvent struct {
	Type string `json:"type"`
	Data struct {
		Object             map[string]any `json:"object"`
		PreviousAttributes map[string]any `json:"previousAttributes"`
	} `json:"data"`
}

// eventsOf lists the events about the risk id, newest first.
func eventsOf(env *apitest.Env, key, id string) []riskEvent {
	env.T.Helper()
	var page struct{ Data []riskEvent }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/events?limit=100", Bearer: key}).Expect(http.StatusOK).Decode(&page)
	var out []riskEvent
	for _, e := range page.Data {
		if e.Data.Object["id"] == id {
			out = append(out, e)
		}
	}
	return out
}

// TestVersionsAndETags: every single-risk response carries ETag "<version>"; the
// version counts the changes that altered a stored field; If-None-Match answers 304.
func TestVersionsAndETags(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	item := func(id string) string { return "/v2/risks/" + id }
	r := decodeVersioned(env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key,
		JSON: map[string]any{"title": "t"}}).Expect(http.StatusCreated))
	if r.Version != 1 {
		t.Fatalf("a new risk is at version %d, want 1", r.Version)
	}
	steps := []struct {
		method, body string
		want         int64
	}{
		{http.MethodPatch, `{"title":"t"}`, 1}, // no change: no new version
		{http.MethodPatch, `{"title":"u"}`, 2},
		{http.MethodPut, `{"title":"u","owner":"o"}`, 3},
		{http.MethodPut, `{"title":"u","owner":"o"}`, 3},
	}
	for _, s := range steps {
		got := decodeVersioned(env.Do(apitest.Request{Method: s.method, Path: item(r.ID), Bearer: a.Key, Body: s.body}).
			Expect(http.StatusOK))
		if got.Version != s.want {
			t.Errorf("%s %s: version %d, want %d", s.method, s.body, got.Version, s.want)
		}
	}
	if evs := eventsOf(env, a.Key, r.ID); len(evs) != 3 {
		t.Errorf("%d events for 1 creation and 2 changes, want 3", len(evs))
	}
	session := apitest.Login(t, env, a).Token
	for v, bearer := range map[string]string{"/v1": session, "/v2": a.Key} {
		path := v + "/risks/" + r.ID
		decodeVersioned(env.Do(apitest.Request{Method: http.MethodGet, Path: path, Bearer: bearer}).Expect(http.StatusOK))
		for _, none := range []string{`"3"`, `W/"3"`, `"1", "3"`, `*`} {
			res := env.Do(apitest.Request{Method: http.MethodGet, Path: path, Bearer: bearer,
				Header: http.Header{"If-None-Match": {none}}}).Expect(http.StatusNotModified)
			if res.Header().Get("ETag") != `"3"` || res.Body.Len() != 0 {
				t.Errorf("If-None-Match %s: ETag %q, body %q; want \"3\" and no body", none, res.Header().Get("ETag"), res.Body)
			}
		}
		decodeVersioned(env.Do(apitest.Request{Method: http.MethodGet, Path: path, Bearer: bearer,
			Header: http.Header{"If-None-Match": {`"2"`}}}).Expect(http.StatusOK))
	}
}

// TestStaleIfMatchIsRefused: a PATCH, PUT or DELETE whose If-Match names no stored
// version is 412 with the risk as stored now in "current", and changes nothing;
// a matching one (or "*") applies; an absent or deleted risk stays 404.
func TestStaleIfMatchIsRefused(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	r := create(env, a.Key, map[string]any{"title": "first", "likelihood": 2, "impact": 2})
	item := "/v2/risks/" + r.ID
	env.Do(apitest.Request{Method: http.MethodPatch, Path: item, Bearer: a.Key, JSON: map[string]any{"title": "second"}}).
		Expect(http.StatusOK)
	stored := env.Do(apitest.Request{Method: http.MethodGet, Path: item, Bearer: a.Key}).Expect(http.StatusOK).Map()
	events := len(eventsOf(env, a.Key, r.ID))
	for _, req := range []apitest.Request{
		{Method: http.MethodPatch, Body: `{"title":"lost"}`, Header: ifMatch(`"1"`)},
		{Method: http.MethodPut, Body: `{"title":"lost"}`, Header: ifMatch(`"1", W/"2"`)},
		{Method: http.MethodDelete, Header: ifMatch(`"bogus"`)},
		{Method: http.MethodPatch, Body: `{"title":"lost"}`, Header: http.Header{"If-Match": {`"1"`}, "Idempotency-Key": {"stale-once-1"}}},
	} {
		req.Path, req.Bearer = item, a.Key
		res := env.Do(req).ExpectProblem(http.StatusPreconditionFailed, "PRECONDITION_FAILED")
		if diff := cmp.Diff(stored, res.Map()["current"]); diff != "" {
			t.Errorf("%s If-Match %s: current differs from the stored risk (-stored +current):\n%s", req.Method, req.Header.Get("If-Match"), diff)
		}
		after := env.Do(apitest.Request{Method: http.MethodGet, Path: item, Bearer: a.Key}).Expect(http.StatusOK).Map()
		if diff := cmp.Diff(stored, after); diff != "" {
			t.Fatalf("a refused %s changed the risk (-before +after):\n%s", req.Method, diff)
		}
	}
	if n := len(eventsOf(env, a.Key, r.ID)); n != events {
		t.Errorf("refused writes emitted %d events", n-events)
	}
	expectInvalid(t, env.Do(apitest.Request{Method: http.MethodPatch, Path: item, Bearer: a.Key, Body: `{}`, Header: ifMatch("2")}), "If-Match")

	got := decodeVersioned(env.Do(apitest.Request{Method: http.MethodPatch, Path: item, Bearer: a.Key, Body: `{"owner":"o"}`,
		Header: ifMatch(`"1", "2"`)}).Expect(http.StatusOK))
	if got.Version != 3 || got.Owner != "o" || got.Title != "second" {
		t.Fatalf("PATCH with a matching If-Match: %+v", got)
	}
	got = decodeVersioned(env.Do(apitest.Request{Method: http.MethodPut, Path: item, Bearer: a.Key, Body: `{"title":"third"}`,
		Header: ifMatch(`*`)}).Expect(http.StatusOK))
	if got.Version != 4 {
		t.Fatalf("PUT with If-Match *: version %d, want 4", got.Version)
	}
	weak := env.Do(apitest.Request{Method: http.MethodDelete, Path: item, Bearer: a.Key, Header: ifMatch(`W/"4"`)}).
		ExpectProblem(http.StatusPreconditionFailed, "PRECONDITION_FAILED") // If-Match compares strongly
	if body := weak.Body.String(); !strings.Contains(body, `never matches; send \"4\"`) {
		t.Errorf("412 for a weak tag of the current version does not say why: %s", body)
	}
	future := env.Do(apitest.Request{Method: http.MethodDelete, Path: item, Bearer: a.Key, Header: ifMatch(`"7"`)}).
		ExpectProblem(http.StatusPreconditionFailed, "PRECONDITION_FAILED")
	if body := future.Body.String(); !strings.Contains(body, `names no version this risk has had (it is at \"4\"`) ||
		strings.Contains(body, "changed since") {
		t.Errorf("412 for a version never issued says the risk changed: %s", body)
	}
	env.Do(apitest.Request{Method: http.MethodDelete, Path: item, Bearer: a.Key, Header: ifMatch(`"4"`)}).Expect(http.StatusNoContent)
	for _, m := range []string{http.MethodPatch, http.MethodPut, http.MethodDelete} {
		env.Do(apitest.Request{Method: m, Path: item, Bearer: a.Key, Body: `{"title":"x"}`, Header: ifMatch(`"4"`)}).
			ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	}
	if evs := eventsOf(env, a.Key, r.ID); len(evs) == 0 || evs[0].Type != "risk.deleted" || evs[0].Data.Object["version"] != float64(4) {
		t.Errorf("the last event is not the deletion of version 4: %+v", evs)
	}
}

// TestRequireIfMatch: with REQUIRE_IF_MATCH=true a write without If-Match is 428
// and changes nothing; reads and creations are unaffected.
func TestRequireIfMatch(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *config.Config) { c.HTTP.RequireIfMatch = true })
	a := env.Tenant("Acme")
	r := create(env, a.Key, map[string]any{"title": "t"})
	item := "/v2/risks/" + r.ID
	for _, m := range []string{http.MethodPatch, http.MethodPut, http.MethodDelete} {
		env.Do(apitest.Request{Method: m, Path: item, Bearer: a.Key, Body: `{"title":"x"}`}).
			ExpectProblem(http.StatusPreconditionRequired, "PRECONDITION_REQUIRED")
	}
	if got := decodeVersioned(env.Do(apitest.Request{Method: http.MethodGet, Path: item, Bearer: a.Key}).Expect(http.StatusOK)); got.Version != 1 || got.Title != "t" {
		t.Fatalf("after refused writes: %+v", got)
	}
	env.Do(apitest.Request{Method: http.MethodPatch, Path: item, Bearer: a.Key, Body: `{"title":"x"}`, Header: ifMatch(`"1"`)}).
		Expect(http.StatusOK)
}

// TestKeyedWritesAndVersions: idempotency comes first — a keyed replay is answered
// from its record (with its ETag) after the risk changed — and a 412 is not stored:
// the same key with a fresh If-Match runs.
func TestKeyedWritesAndVersions(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	r := create(env, a.Key, map[string]any{"title": "t"})
	item := "/v2/risks/" + r.ID
	keyed := func(key, match, title string) apitest.Request {
		return apitest.Request{Method: http.MethodPatch, Path: item, Bearer: a.Key, Body: `{"title":"` + title + `"}`,
			Header: http.Header{"Idempotency-Key": {key}, "If-Match": {match}}}
	}
	first := env.Do(keyed("version-key-1", `"1"`, "mine")).Expect(http.StatusOK)
	env.Do(apitest.Request{Method: http.MethodPatch, Path: item, Bearer: a.Key, Body: `{"title":"theirs"}`}).Expect(http.StatusOK)

	replay := env.Do(keyed("version-key-1", `"1"`, "mine")).Expect(http.StatusOK)
	if replay.Header().Get("Idempotent-Replayed") != "true" || replay.Body.String() != first.Body.String() ||
		replay.Header().Get("ETag") != `"2"` {
		t.Fatalf("replay after a later change: %s %q ETag %q; want the first answer, replayed, with ETag \"2\"",
			replay.Body, replay.Header().Get("Idempotent-Replayed"), replay.Header().Get("ETag"))
	}

	env.Do(keyed("version-key-2", `"2"`, "late")).ExpectProblem(http.StatusPreconditionFailed, "PRECONDITION_FAILED")
	again := env.Do(keyed("version-key-2", `"3"`, "late")).Expect(http.StatusOK)
	if again.Header().Get("Idempotent-Replayed") != "false" || decodeVersioned(again).Version != 4 {
		t.Fatalf("the key of a 412 with a fresh If-Match: %s replayed=%q; want it to run", again.Body, again.Header().Get("Idempotent-Replayed"))
	}
}

// TestPreviousAttributes: risk.updated carries the previous values of exactly the
// fields the change altered, derived score included; updatedAt and version left out.
func TestPreviousAttributes(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	r := create(env, a.Key, map[string]any{"title": "t", "owner": "o", "likelihood": 3, "impact": 4})
	env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + r.ID, Bearer: a.Key,
		JSON: map[string]any{"title": "u", "owner": "o", "likelihood": 2}}).Expect(http.StatusOK)
	evs := eventsOf(env, a.Key, r.ID)
	if len(evs) != 2 || evs[0].Type != "risk.updated" {
		t.Fatalf("events %+v, want risk.created and risk.updated", evs)
	}
	want := map[string]any{"title": "t", "likelihood": float64(3), "riskScore": float64(12)}
	if diff := cmp.Diff(want, evs[0].Data.PreviousAttributes); diff != "" {
		t.Errorf("previousAttributes (-want +got):\n%s", diff)
	}
}

// TestConcurrentWritesWithOneIfMatch: of 50 PATCHes sent at once with the same
// If-Match, exactly one applies and the others get 412 — within one instance and,
// on PostgreSQL, spread over two instances on one database.
func TestConcurrentWritesWithOneIfMatch(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	instances := []*apitest.Env{env}
	if dbtest.Postgres() {
		instances = append(instances, apitest.New(t, func(c *config.Config) { c.Database.URL = env.App.Config.Database.URL }))
	}
	r := create(env, a.Key, map[string]any{"title": "t"})
	const writers = 50
	var wg sync.WaitGroup
	codes := make([]int, writers)
	bodies := make([]string, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := instances[i%len(instances)].Do(apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + r.ID,
				Bearer: a.Key, Body: fmt.Sprintf(`{"title":"writer %d"}`, i), Header: ifMatch(`"1"`)})
			codes[i], bodies[i] = res.Code, res.Body.String()
		}()
	}
	wg.Wait()
	winner := -1
	for i, c := range codes {
		switch c {
		case http.StatusOK:
			if winner >= 0 {
				t.Fatalf("writers %d and %d both applied", winner, i)
			}
			winner = i
		case http.StatusPreconditionFailed:
		default:
			t.Fatalf("writer %d: %d %s", i, c, bodies[i])
		}
	}
	if winner < 0 {
		t.Fatal("no writer applied")
	}
	got := decodeVersioned(env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + r.ID, Bearer: a.Key}).Expect(http.StatusOK))
	if got.Version != 2 || got.Title != fmt.Sprintf("writer %d", winner) {
		t.Errorf("stored %+v, want version 2 with writer %d's title", got, winner)
	}
	for i, b := range bodies {
		if codes[i] != http.StatusPreconditionFailed {
			continue
		}
		var p struct{ Current versioned }
		if err := json.Unmarshal([]byte(b), &p); err != nil || p.Current.Version < 1 {
			t.Fatalf("writer %d's 412 has no current risk: %s", i, b)
		}
	}
	if evs := eventsOf(env, a.Key, r.ID); len(evs) != 2 {
		t.Errorf("%d events, want the creation and one update", len(evs))
	}
}
