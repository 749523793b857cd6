package eventhttp_test

import (
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
)

// TestPatchEndpointIfMatch: an endpoint carries a version, its ETag; a PATCH whose
// If-Match names it changes the endpoint and moves the version; one naming an older
// version is 412 PRECONDITION_FAILED with the endpoint as stored in current, and
// changes nothing; with REQUIRE_IF_MATCH, a PATCH without If-Match is 428 and one
// with "*" goes through. A disable moves the version too.
func TestPatchEndpointIfMatch(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate, func(c *config.Config) { c.HTTP.RequireIfMatch = true })
	a := env.Tenant("Acme")
	tok := login(t, env, a)
	ep := createEndpoint(t, env, tok, "http://127.0.0.1:9/hook", "risk.created")
	path := "/v1/webhook-endpoints/" + ep.ID
	patch := func(ifMatch string, body map[string]any) *apitest.Response {
		h := http.Header{}
		if ifMatch != "" {
			h.Set("If-Match", ifMatch)
		}
		return apitest.Do(t, env, apitest.Request{Method: "PATCH", Path: path, Bearer: tok, Header: h, JSON: body})
	}
	read := apitest.Do(t, env, apitest.Request{Method: "GET", Path: path, Bearer: tok}).Expect(200)
	v1 := read.Header().Get("ETag")
	if v1 != `"1"` || read.Map()["version"] != 1.0 {
		t.Fatalf("a new endpoint's ETag %s, version %v; want \"1\", 1", v1, read.Map()["version"])
	}

	patch("", map[string]any{"description": "no precondition"}).ExpectProblem(428, "PRECONDITION_REQUIRED")
	res := patch(v1, map[string]any{"description": "first"}).Expect(200)
	v2 := res.Header().Get("ETag")
	if v2 != `"2"` || res.Map()["version"] != 2.0 {
		t.Fatalf("after a PATCH: ETag %s, body %v", v2, res.Map())
	}
	// Another admin's PATCH read version 1: refused, the endpoint as stored in current.
	spec := apitest.LoadSpec(t, "../../../docs/openapi.yaml")
	spec.Check(t, "GET", path, nil, read)
	spec.Check(t, "PATCH", path, nil, res)
	staleRes := patch(v1, map[string]any{"description": "lost update"}).ExpectProblem(412, "PRECONDITION_FAILED")
	spec.Check(t, "PATCH", path, nil, staleRes)
	spec.Check(t, "PATCH", path, nil, patch("", map[string]any{"description": "x"}).ExpectProblem(428, "PRECONDITION_REQUIRED"))
	stale := staleRes.Map()
	current, _ := stale["current"].(map[string]any)
	if current == nil || current["description"] != "first" || current["version"] != 2.0 {
		t.Fatalf("412's current = %v, want the endpoint at version 2", stale["current"])
	}
	patch(`W/"2"`, map[string]any{"description": "weak"}).ExpectProblem(412, "PRECONDITION_FAILED")
	patch(`"x`, map[string]any{"description": "bad"}).ExpectProblem(400, "VALIDATION_FAILED")
	if got := getEndpoint(t, env, tok, ep.ID); got.Description != "first" {
		t.Fatalf("description %q after refused PATCHes, want first", got.Description)
	}
	// A PATCH that changes nothing keeps the version.
	if etag := patch(v2, map[string]any{"description": "first"}).Expect(200).Header().Get("ETag"); etag != v2 {
		t.Fatalf("a PATCH changing nothing moved the ETag to %s", etag)
	}
	disabled := post(t, env, tok, path+"/disable", map[string]any{}).Expect(200)
	if etag := disabled.Header().Get("ETag"); etag != `"3"` {
		t.Fatalf("ETag after disable %s, want \"3\"", etag)
	}
	patch(v2, map[string]any{"url": "http://127.0.0.1:9/other"}).ExpectProblem(412, "PRECONDITION_FAILED")
	patch("*", map[string]any{"url": "http://127.0.0.1:9/other"}).Expect(200)
	if n := len(auditOf(t, env, tok, "webhook_endpoint.updated")); n != 2 {
		t.Fatalf("%d webhook_endpoint.updated entries, want 2 (refused PATCHes record nothing)", n)
	}
}

// TestEndpointWritesAnswerTheirETag: the create (201) and roll-secret answers carry
// the endpoint's version as ETag, as GET does, so that a client's next PATCH needs
// no read first; roll-secret honours an If-Match sent (412 for a stale one, nothing
// rolled).
func TestEndpointWritesAnswerTheirETag(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate)
	a := env.Tenant("Acme")
	tok := login(t, env, a)
	created := apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints", Bearer: tok,
		JSON: map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"risk.created"}}}).Expect(201)
	if got := created.Header().Get("ETag"); got != `"1"` {
		t.Fatalf("create answered ETag %q, want \"1\"", got)
	}
	spec := apitest.LoadSpec(t, "../../../docs/openapi.yaml")
	spec.Check(t, "POST", "/v1/webhook-endpoints", nil, created)
	id, _ := created.Map()["id"].(string)
	path := "/v1/webhook-endpoints/" + id
	// A stale If-Match rolls nothing, as for disable and enable.
	stale := apitest.Do(t, env, apitest.Request{Method: "POST", Path: path + "/roll-secret", Bearer: tok,
		Header: http.Header{"If-Match": {`"7"`}}, JSON: map[string]any{"expiresIn": 0}}).ExpectProblem(412, "PRECONDITION_FAILED")
	spec.Check(t, "POST", path+"/roll-secret", nil, stale)
	if _, leaked := stale.Map()["secret"]; leaked || getEndpoint(t, env, tok, id).Version != 1 {
		t.Fatalf("a stale roll answered %v and left version %d; want no secret and version 1", stale.Map(), getEndpoint(t, env, tok, id).Version)
	}
	rolled := apitest.Do(t, env, apitest.Request{Method: "POST", Path: path + "/roll-secret", Bearer: tok,
		Header: http.Header{"If-Match": {`"1"`}}, JSON: map[string]any{"expiresIn": 0}}).Expect(200)
	spec.Check(t, "POST", path+"/roll-secret", nil, rolled)
	read := apitest.Do(t, env, apitest.Request{Method: "GET", Path: path, Bearer: tok}).Expect(200)
	if got, want := rolled.Header().Get("ETag"), read.Header().Get("ETag"); got == "" || got != want || got == `"1"` {
		t.Fatalf("roll-secret answered ETag %q; GET after it %q (the roll moves the version)", got, want)
	}
	// The rolled answer's ETag is good for the next PATCH.
	apitest.Do(t, env, apitest.Request{Method: "PATCH", Path: path, Bearer: tok,
		Header: http.Header{"If-Match": {rolled.Header().Get("ETag")}}, JSON: map[string]any{"description": "after the roll"}}).Expect(200)
}
