package server_test

import (
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
)

// TestAuthenticatedResponsesAreNotStored: every answer to a credential — reads,
// writes, replays, downloads — carries Cache-Control: no-store, so no shared cache
// keeps a tenant's data (a cookie-authenticated download above all).
func TestAuthenticatedResponsesAreNotStored(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	s := apitest.Login(t, env, a)
	var risk struct{ ID string }
	created := env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "r"}, Header: idemKey("no-store-key-1")}).Expect(201)
	created.Decode(&risk)
	replayed := env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "r"}, Header: idemKey("no-store-key-1")}).Expect(201)
	body, ct := apitest.Multipart("", apitest.FilePart("file", "a.txt", "text/plain", "secret bytes"))
	var att struct{ ID string }
	env.Upload("/v2/risks/"+risk.ID+"/attachments", a.Key, nil, body, ct).Expect(201).Decode(&att)
	cookie := http.Header{"Cookie": {"session=" + s.Token}}
	for name, r := range map[string]*apitest.Response{
		"create":          created,
		"sign-in":         env.Do(apitest.Request{Method: "POST", Path: "/v1/sessions", JSON: map[string]any{"email": a.Email, "password": a.Password}}).Expect(201),
		"replay":          replayed,
		"read":            env.Do(apitest.Request{Method: "GET", Path: "/v2/risks/" + risk.ID, Bearer: a.Key}).Expect(200),
		"list /v1":        env.Do(apitest.Request{Method: "GET", Path: "/v1/risks", Bearer: s.Token}).Expect(200),
		"cookie download": env.Do(apitest.Request{Method: "GET", Path: "/v1/attachments/" + att.ID + "/content", Header: cookie}).Expect(200),
		"head":            env.Do(apitest.Request{Method: "HEAD", Path: "/v2/risks/" + risk.ID, Bearer: a.Key}).Expect(200),
	} {
		if got := r.Header().Get("Cache-Control"); got != "no-store" {
			t.Errorf("%s: Cache-Control = %q, want no-store", name, got)
		}
	}
}

// TestReplayedCreateCarriesItsLocation: a replayed 201 carries the Location of the
// first response (docs/idempotency.md, What is stored), for risks and attachments, on
// the store under test.
func TestReplayedCreateCarriesItsLocation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	req := apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "located"}, Header: idemKey("location-key-1")}
	first := env.Do(req).Expect(201)
	again := env.Do(req).Expect(201)
	var risk struct{ ID string }
	first.Decode(&risk)
	if want := "/v2/risks/" + risk.ID; first.Header().Get("Location") != want {
		t.Fatalf("first Location = %q, want %q", first.Header().Get("Location"), want)
	}
	if again.Header().Get("Idempotent-Replayed") != "true" || again.Header().Get("Location") != first.Header().Get("Location") {
		t.Errorf("replay: Idempotent-Replayed %q, Location %q, want true and %q",
			again.Header().Get("Idempotent-Replayed"), again.Header().Get("Location"), first.Header().Get("Location"))
	}

	body, ct := apitest.Multipart("fixed-boundary", apitest.FilePart("file", "a.txt", "text/plain", "bytes"))
	up := env.Upload("/v2/risks/"+risk.ID+"/attachments", a.Key, idemKey("location-key-2"), body, ct).Expect(201)
	upAgain := env.Upload("/v2/risks/"+risk.ID+"/attachments", a.Key, idemKey("location-key-2"), body, ct).Expect(201)
	if up.Header().Get("Location") == "" || upAgain.Header().Get("Location") != up.Header().Get("Location") {
		t.Errorf("upload replay Location %q, want %q", upAgain.Header().Get("Location"), up.Header().Get("Location"))
	}
	// Only the kept headers come back: nothing else of the first response is stored.
	if again.Header().Get("Content-Type") != first.Header().Get("Content-Type") {
		t.Errorf("replay Content-Type %q, want %q", again.Header().Get("Content-Type"), first.Header().Get("Content-Type"))
	}
}
