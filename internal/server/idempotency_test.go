package server_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
)

func idemKey(k string) http.Header { return http.Header{"Idempotency-Key": {k}} }

func riskCount(t *testing.T, env *apitest.Env, tenantID string) int {
	t.Helper()
	var n int64
	if err := env.App.DB.Table("risks").Where("tenant_id = ?", tenantID).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return int(n)
}

func TestKeyedCreateMakesOneRisk(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	body := `{"title":"Vendor contract missing a DPA","category":"Third-Party","likelihood":3,"impact":4}`
	first := env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: body, Header: idemKey("create-once-1")}).Expect(201)
	// Keys reordered, other whitespace, 3 spelled 3.0: the same request.
	again := env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Header: idemKey("create-once-1"),
		Body: `{ "impact": 4, "likelihood": 3.0, "category": "Third-Party", "title": "Vendor contract missing a DPA" }`}).Expect(201)
	if again.Header().Get("Idempotent-Replayed") != "true" || again.Body.String() != first.Body.String() {
		t.Fatalf("retry: replayed=%q body\n%s\nwant\n%s", again.Header().Get("Idempotent-Replayed"), again.Body, first.Body)
	}
	if n := riskCount(t, env, a.ID); n != 1 {
		t.Fatalf("%d risks, want 1", n)
	}
	// Another body under the key is refused and writes nothing.
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Header: idemKey("create-once-1"),
		Body: `{"title":"Another risk"}`}).ExpectProblem(422, "IDEMPOTENCY_KEY_REUSED")
	if n := riskCount(t, env, a.ID); n != 1 {
		t.Fatalf("%d risks after a reused key, want 1", n)
	}
}

func TestFiftyConcurrentRetriesMakeOneRisk(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	var wg sync.WaitGroup
	codes := make([]int, 50)
	start := make(chan struct{})
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			codes[i] = env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key,
				Body: `{"title":"Raced"}`, Header: idemKey("raced-key-1")}).Code
		}()
	}
	close(start)
	wg.Wait()
	for _, c := range codes {
		if c != 201 && c != 409 {
			t.Fatalf("answer %d, want 201 (run or replay) or 409", c)
		}
	}
	if n := riskCount(t, env, a.ID); n != 1 {
		t.Fatalf("%d risks, want exactly 1", n)
	}
}

func TestKeysAreScopedByTenantAndPath(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.Tenant("Acme"), env.Tenant("Beta")
	ra := env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"A"}`, Header: idemKey("shared-key-1")}).Expect(201)
	rb := env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: b.Key, Body: `{"title":"A"}`, Header: idemKey("shared-key-1")}).Expect(201)
	if rb.Header().Get("Idempotent-Replayed") != "false" || ra.Map()["id"] == rb.Map()["id"] {
		t.Fatalf("tenant B got tenant A's response: %s", rb.Body)
	}
	// Users of one tenant share its records, across credentials.
	login := env.Do(apitest.Request{Method: "POST", Path: "/v1/sessions", JSON: map[string]string{"email": a.Email, "password": a.Password}}).Expect(201)
	token := login.Map()["token"].(string)
	v1 := env.Do(apitest.Request{Method: "POST", Path: "/v1/risks", Bearer: token, Body: `{"title":"A"}`, Header: idemKey("shared-key-1")}).Expect(201)
	if v1.Header().Get("Idempotent-Replayed") != "false" {
		t.Fatal("/v1/risks and /v2/risks are different paths and must not share a record")
	}
	again := env.Do(apitest.Request{Method: "POST", Path: "/v1/risks", Bearer: token, Body: `{"title":"A"}`, Header: idemKey("shared-key-1")}).Expect(201)
	if again.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatal("a retry through the session was not replayed")
	}
	if riskCount(t, env, a.ID) != 2 || riskCount(t, env, b.ID) != 1 {
		t.Fatalf("risks: A %d (want 2), B %d (want 1)", riskCount(t, env, a.ID), riskCount(t, env, b.ID))
	}
}

func TestUpdatesAndDeletesReplay(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	id := env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"T","likelihood":2,"impact":2}`}).Expect(201).Map()["id"].(string)
	path := "/v2/risks/" + id
	p1 := env.Do(apitest.Request{Method: "PATCH", Path: path, Bearer: a.Key, Body: `{"impact":5}`, Header: idemKey("patch-key-1")}).Expect(200)
	env.Clock.Advance(1e9)
	p2 := env.Do(apitest.Request{Method: "PATCH", Path: path, Bearer: a.Key, Body: `{"impact":5}`, Header: idemKey("patch-key-1")}).Expect(200)
	if p2.Header().Get("Idempotent-Replayed") != "true" || p1.Body.String() != p2.Body.String() {
		t.Fatalf("PATCH retry was not a replay:\n%s\n%s", p1.Body, p2.Body)
	}
	d1 := env.Do(apitest.Request{Method: "DELETE", Path: path, Bearer: a.Key, Header: idemKey("delete-key-1")}).Expect(204)
	d2 := env.Do(apitest.Request{Method: "DELETE", Path: path, Bearer: a.Key, Header: idemKey("delete-key-1")}).Expect(204)
	if d1.Body.Len() != 0 || d2.Body.Len() != 0 || d2.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("DELETE retry: %q %q", d2.Header().Get("Idempotent-Replayed"), d2.Body)
	}
	env.Do(apitest.Request{Method: "DELETE", Path: path, Bearer: a.Key}).ExpectProblem(404, "NOT_FOUND")
}

func TestRejectedWriteLeavesTheKeyFreeForTheCorrection(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"T","likelihood":9}`, Header: idemKey("fix-me-key")}).
		ExpectProblem(400, "VALIDATION_FAILED")
	ok := env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"T","likelihood":5}`, Header: idemKey("fix-me-key")}).Expect(201)
	if ok.Header().Get("Idempotent-Replayed") != "false" || riskCount(t, env, a.ID) != 1 {
		t.Fatalf("corrected retry: replayed=%q, %d risks", ok.Header().Get("Idempotent-Replayed"), riskCount(t, env, a.ID))
	}
	// Unparseable JSON is refused before any record exists.
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"a","title":"b"}`, Header: idemKey("dup-names-key")}).
		ExpectProblem(400, "VALIDATION_FAILED")
	var n int64
	env.App.DB.Table("idempotency_records").Where("idem_key = ?", "dup-names-key").Count(&n)
	if n != 0 {
		t.Fatal("a body with duplicate names left a record")
	}
}

func TestKeyFailuresRecordNothing(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *config.Config) { c.Idempotency.Required = true })
	a := env.Tenant("Acme")
	for _, k := range []string{"short7c", fmt.Sprintf("%0129d", 0), "with space", "ключ-12345"} {
		env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"T"}`, Header: idemKey(k)}).
			ExpectProblem(400, "IDEMPOTENCY_KEY_INVALID")
	}
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"T"}`}).ExpectProblem(400, "IDEMPOTENCY_KEY_REQUIRED")
	env.Do(apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key, Header: idemKey("get-is-ignored")}).Expect(200)
	// Authentication runs first: a bad credential leaves no record.
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: "rk_wrong", Body: `{"title":"T"}`, Header: idemKey("unauth-key-1")}).
		ExpectProblem(401, "UNAUTHENTICATED")
	var n int64
	env.App.DB.Table("idempotency_records").Count(&n)
	if n != 0 || riskCount(t, env, a.ID) != 0 {
		t.Fatalf("%d records, %d risks; want none", n, riskCount(t, env, a.ID))
	}
	env.Do(apitest.Request{Method: "POST", Path: "/v1/sessions", Header: idemKey("login-key-1"),
		JSON: map[string]string{"email": a.Email, "password": a.Password}}).ExpectProblem(422, "IDEMPOTENCY_UNSUPPORTED_ROUTE")
}
