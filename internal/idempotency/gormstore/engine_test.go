package gormstore_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/idempotency"
)

func TestReplayReturnsTheStoredResponse(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	first := h.do(call{key: "replay-key-1", body: `{"name":"w1","id":"a1"}`})
	if first.Code != http.StatusCreated || first.Header().Get("Idempotent-Replayed") != "false" {
		t.Fatalf("first: %d %q %s", first.Code, first.Header().Get("Idempotent-Replayed"), first.Body)
	}
	// The same request in other spellings of the same JSON is a retry, not a reuse.
	for _, body := range []string{
		`{"name":"w1","id":"a1"}`,
		`{"id":"a1","name":"w1"}`,
		"{\n  \"id\" : \"a1\",\t\"name\":\"w\\u0031\"\n}",
	} {
		again := h.do(call{key: "replay-key-1", body: body})
		if again.Code != http.StatusCreated {
			t.Fatalf("replay of %s: status %d %s", body, again.Code, again.Body)
		}
		if got := again.Header().Get("Idempotent-Replayed"); got != "true" {
			t.Fatalf("Idempotent-Replayed = %q, want true", got)
		}
		if again.Body.String() != first.Body.String() {
			t.Fatalf("replayed body differs:\n%s\n%s", again.Body, first.Body)
		}
		if again.Header().Get("Content-Type") != first.Header().Get("Content-Type") {
			t.Fatalf("Content-Type %q, want %q", again.Header().Get("Content-Type"), first.Header().Get("Content-Type"))
		}
	}
	if n := h.ran.Load(); n != 1 {
		t.Fatalf("handler ran %d times, want 1", n)
	}
	if diff := cmp.Diff([]string{"w1"}, h.names()); diff != "" {
		t.Fatalf("widgets (-want +got):\n%s", diff)
	}
}

func TestNumbersCompareByExactValue(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.do(call{key: "numbers-key", body: `{"name":"n","id":"n1","fail":"","x":3}`})
	if r := h.do(call{key: "numbers-key", body: `{"x":3.0,"name":"n","id":"n1","fail":""}`}); r.Code != 201 || r.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("3.0 after 3: %d %s, want a replay", r.Code, r.Body)
	}
	h.do(call{key: "numbers-key-2", body: `{"name":"m","id":"n2","x":9007199254740993}`})
	if r := h.do(call{key: "numbers-key-2", body: `{"name":"m","id":"n2","x":9007199254740992}`}); r.Code != 422 {
		t.Fatalf("2^53 after 2^53+1: %d %s, want 422", r.Code, r.Body)
	}
}

func TestKeyReusedForAnotherRequest(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.do(call{key: "reuse-key-1", body: `{"name":"first","id":"r1"}`})
	before := h.record("tenant-a", "POST", "/widgets", "reuse-key-1")

	r := h.do(call{key: "reuse-key-1", body: `{"name":"second","id":"r2"}`})
	if r.Code != http.StatusUnprocessableEntity || code(r) != "IDEMPOTENCY_KEY_REUSED" {
		t.Fatalf("other body: %d %s, want 422 IDEMPOTENCY_KEY_REUSED", r.Code, r.Body)
	}
	if r := h.do(call{key: "reuse-key-1", path: "/widgets?dry=1", body: `{"name":"first","id":"r1"}`}); r.Code != 422 {
		t.Fatalf("other query: %d, want 422", r.Code)
	}
	if diff := cmp.Diff([]string{"first"}, h.names()); diff != "" {
		t.Fatalf("a refused request wrote (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, h.record("tenant-a", "POST", "/widgets", "reuse-key-1")); diff != "" {
		t.Fatalf("a refused request changed the record (-before +after):\n%s", diff)
	}

	// The same key on another method, path or scope is another record.
	if r := h.do(call{key: "reuse-key-1", method: "PUT", body: `{"name":"put","id":"r3"}`}); r.Code != 201 || r.Header().Get("Idempotent-Replayed") != "false" {
		t.Fatalf("other method: %d %s", r.Code, r.Body)
	}
	if r := h.do(call{key: "reuse-key-1", scope: "tenant-b", body: `{"name":"first","id":"r4"}`}); r.Code != 201 || r.Header().Get("Idempotent-Replayed") != "false" {
		t.Fatalf("other scope: %d %s, want its own execution", r.Code, r.Body)
	}
	if diff := cmp.Diff([]string{"first", "first", "put"}, h.names()); diff != "" {
		t.Fatalf("widgets (-want +got):\n%s", diff)
	}
}

func TestConcurrentRequestsWithOneKeyExecuteOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	const n = 50
	start := make(chan struct{})
	var wg sync.WaitGroup
	statuses := make([]int, n)
	replayed := make([]string, n)
	bodies := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := h.do(call{key: "concurrent-key", body: `{"name":"only","id":"c1"}`})
			statuses[i], replayed[i], bodies[i] = r.Code, r.Header().Get("Idempotent-Replayed"), r.Body.String()
		}()
	}
	close(start)
	wg.Wait()

	executed, conflicts, replays := 0, 0, 0
	var executedBody string
	for i, s := range statuses {
		switch {
		case s == 201 && replayed[i] == "false":
			executed++
			executedBody = bodies[i]
		case s == 201 && replayed[i] == "true":
			replays++
		case s == 409:
			conflicts++
		default:
			t.Fatalf("unexpected answer %d %s", s, bodies[i])
		}
	}
	for i, s := range statuses {
		if s == 201 && bodies[i] != executedBody {
			t.Fatalf("a replay differs from the execution:\n%s\n%s", bodies[i], executedBody)
		}
	}
	t.Logf("1 execution, %d replays, %d conflicts", replays, conflicts)
	if executed != 1 || h.ran.Load() != 1 {
		t.Fatalf("executed %d times (handler ran %d), want exactly once", executed, h.ran.Load())
	}
	if diff := cmp.Diff([]string{"only"}, h.names()); diff != "" {
		t.Fatalf("widgets (-want +got):\n%s", diff)
	}
}

func TestInProgressIsRefusedWithRetryAfter(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.gate = make(chan struct{})
	done := make(chan int)
	go func() { done <- h.do(call{key: "slow-key-1", body: `{"name":"slow","id":"s1"}`}).Code }()
	// Wait until the first request holds the key.
	deadline := time.Now().Add(10 * time.Second)
	for h.ran.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	// Whatever the body: PROCESSING refuses every request with the key.
	for _, body := range []string{`{"name":"slow","id":"s1"}`, `{"name":"other"}`} {
		r := h.do(call{key: "slow-key-1", body: body})
		if r.Code != http.StatusConflict || code(r) != "IDEMPOTENCY_REQUEST_IN_PROGRESS" || r.Header().Get("Retry-After") == "" {
			t.Fatalf("during processing: %d %q Retry-After %q, want 409 with Retry-After", r.Code, code(r), r.Header().Get("Retry-After"))
		}
	}
	close(h.gate)
	if s := <-done; s != 201 {
		t.Fatalf("first request: %d", s)
	}
	if r := h.do(call{key: "slow-key-1", body: `{"name":"slow","id":"s1"}`}); r.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("after completion: %d %s, want replay", r.Code, r.Body)
	}
}

func TestFailuresRollBackAndFreeTheKey(t *testing.T) {
	t.Parallel()
	for _, fail := range []string{"400", "400-written", "500", "panic"} {
		t.Run(fail, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			key := "fail-key-" + strings.ReplaceAll(fail, "-", "")
			r := h.do(call{key: key, body: `{"name":"bad","id":"f1","fail":"` + fail + `"}`})
			if r.Code < 400 {
				t.Fatalf("status %d, want the handler's error", r.Code)
			}
			if fail == "400-written" && code(r) != "WRITTEN_BY_HANDLER" {
				t.Fatalf("the handler's own error response was not passed through: %s", r.Body)
			}
			if got := r.Header().Get("Idempotent-Replayed"); got != "false" {
				t.Fatalf("Idempotent-Replayed = %q on a request that ran", got)
			}
			if names := h.names(); len(names) != 0 {
				t.Fatalf("the failed request's write survived: %v", names)
			}
			rec := h.record("tenant-a", "POST", "/widgets", key)
			if rec == nil || rec.State != idempotency.StateFailed {
				t.Fatalf("record = %+v, want FAILED", rec)
			}
			// A corrected retry with the same key runs.
			r = h.do(call{key: key, body: `{"name":"good","id":"f1"}`})
			if r.Code != 201 || r.Header().Get("Idempotent-Replayed") != "false" {
				t.Fatalf("corrected retry: %d %s", r.Code, r.Body)
			}
			if diff := cmp.Diff([]string{"good"}, h.names()); diff != "" {
				t.Fatalf("widgets (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeleteReplaysAnEmpty204(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.do(call{key: "create-d1", body: `{"name":"doomed","id":"d1"}`})
	first := h.do(call{method: "DELETE", path: "/widgets/d1", key: "delete-d1"})
	again := h.do(call{method: "DELETE", path: "/widgets/d1", key: "delete-d1"})
	if first.Code != 204 || again.Code != 204 || again.Header().Get("Idempotent-Replayed") != "true" || again.Body.Len() != 0 {
		t.Fatalf("delete: %d, replay %d %q body %q", first.Code, again.Code, again.Header().Get("Idempotent-Replayed"), again.Body)
	}
	// Without the key the second delete would have been a 404.
	if r := h.do(call{method: "DELETE", path: "/widgets/d1"}); r.Code != 404 {
		t.Fatalf("unkeyed delete of a deleted widget: %d", r.Code)
	}
}

func TestKeyValidationAndPolicies(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	bad := []struct {
		name    string
		headers [][2]string
	}{
		{"7 characters", [][2]string{{"Idempotency-Key", "abcdefg"}}},
		{"129 characters", [][2]string{{"Idempotency-Key", strings.Repeat("x", 129)}}},
		{"inner space", [][2]string{{"Idempotency-Key", "abcd efgh"}}},
		{"non-ASCII", [][2]string{{"Idempotency-Key", "schlüssel-1"}}},
		{"two headers", [][2]string{{"Idempotency-Key", "abcdefgh"}, {"Idempotency-Key", "abcdefgh"}}},
	}
	for _, tc := range bad {
		r := h.do(call{body: `{"name":"x"}`, headers: tc.headers})
		if r.Code != 400 || code(r) != "IDEMPOTENCY_KEY_INVALID" {
			t.Errorf("%s: %d %s, want 400 IDEMPOTENCY_KEY_INVALID", tc.name, r.Code, r.Body)
		}
	}
	if n := h.count("idempotency_records") + len(h.names()); n != 0 {
		t.Fatalf("invalid keys stored or wrote %d rows", n)
	}
	for _, key := range []string{"abcdefgh", strings.Repeat("K", 128), " spaced.key_1 "} {
		if r := h.do(call{key: key, body: `{"name":"ok-` + strings.TrimSpace(key)[:3] + `","id":"` + strings.TrimSpace(key)[:4] + `"}`}); r.Code != 201 {
			t.Errorf("key %q: %d %s", key, r.Code, r.Body)
		}
	}
	records := h.count("idempotency_records")
	if r := h.do(call{method: "GET", key: "get-key-123"}); r.Code != 200 || r.Header().Get("Idempotent-Replayed") != "" {
		t.Fatalf("GET with a key: %d %q", r.Code, r.Header().Get("Idempotent-Replayed"))
	}
	if got := h.count("idempotency_records"); got != records {
		t.Fatalf("a GET with a key stored a record")
	}
	if r := h.do(call{path: "/unsupported", key: "unsupported-1"}); r.Code != 422 || code(r) != "IDEMPOTENCY_UNSUPPORTED_ROUTE" {
		t.Fatalf("key on an unsupported route: %d %s", r.Code, r.Body)
	}
	if r := h.do(call{path: "/unsupported"}); r.Code != 204 {
		t.Fatalf("unsupported route without a key: %d", r.Code)
	}
}

func TestRequiredRefusesWritesWithoutAKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *idempotency.Config) { c.Required = true })
	if r := h.do(call{body: `{"name":"x"}`}); r.Code != 400 || code(r) != "IDEMPOTENCY_KEY_REQUIRED" {
		t.Fatalf("write without key: %d %s", r.Code, r.Body)
	}
	if r := h.do(call{method: "GET"}); r.Code != 200 {
		t.Fatalf("read without key: %d", r.Code)
	}
	if r := h.do(call{key: "required-1", body: `{"name":"x","id":"q1"}`}); r.Code != 201 {
		t.Fatalf("write with key: %d", r.Code)
	}
	if diff := cmp.Diff([]string{"x"}, h.names()); diff != "" {
		t.Fatal(diff)
	}
}

func TestClientDisconnectNeitherDoublesNorLosesTheWrite(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.gate = make(chan struct{})
	ctx, hangUp := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.do(call{ctx: ctx, key: "hangup-key-1", body: `{"name":"kept","id":"h1"}`})
	}()
	for h.ran.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	hangUp() // the client goes away mid-request
	close(h.gate)
	<-done
	r := h.do(call{key: "hangup-key-1", body: `{"name":"kept","id":"h1"}`})
	if r.Code != 201 || r.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry after hang-up: %d %q, want the replay of the completed write", r.Code, r.Header().Get("Idempotent-Replayed"))
	}
	if diff := cmp.Diff([]string{"kept"}, h.names()); diff != "" {
		t.Fatal(diff)
	}
}

func TestStoreFailureFailsClosed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.db.Close()
	r := h.do(call{key: "closed-store", body: `{"name":"x"}`})
	if r.Code != 503 || code(r) != "STORE_UNAVAILABLE" || r.Header().Get("Retry-After") == "" {
		t.Fatalf("store down: %d %s Retry-After %q, want 503 STORE_UNAVAILABLE", r.Code, r.Body, r.Header().Get("Retry-After"))
	}
	if h.ran.Load() != 0 {
		t.Fatal("the handler ran without its record")
	}
}
