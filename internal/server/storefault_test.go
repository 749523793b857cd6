package server_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/netfault"
)

// proxied starts riskapi on a fresh PostgreSQL database reached through a TCP proxy
// the test can stall, cut and restore, with a lease of lease (config.Leases.Store is
// half of it). PostgreSQL only: SQLite has no connection to fault.
func proxied(t *testing.T, lease time.Duration) (*apitest.Env, *netfault.Proxy) {
	t.Helper()
	if testing.Short() {
		t.Skip("connection fault through a proxy: skipped by -short, ./test runs it")
	}
	if !dbtest.Postgres() {
		t.Skip("connection faults need PostgreSQL (TEST_DATABASE_URL=postgres://…); SQLite has no connection")
	}
	var px *netfault.Proxy
	env := apitest.New(t, func(c *config.Config) {
		u, err := url.Parse(c.Database.URL)
		if err != nil {
			t.Fatal(err)
		}
		px = netfault.StartT(t, u.Host)
		u.Host = px.Addr()
		c.Database.URL = u.String()
		c.Idempotency.Lease = lease
	})
	return env, px
}

// checkUnavailable asserts a 503 STORE_UNAVAILABLE problem with Retry-After and the
// given outcome, and returns it.
func checkUnavailable(t *testing.T, res *apitest.Response, outcome string) map[string]any {
	t.Helper()
	doc := checkProblem(t, res, 503, "STORE_UNAVAILABLE")
	checkRetryAfter(t, res)
	if doc["outcome"] != outcome {
		t.Errorf("outcome = %v, want %q; body %s", doc["outcome"], outcome, res.Body.String())
	}
	return doc
}

// warm fills the connection pool, so that the next requests use connections that
// were open before the fault. A connection an earlier fault broke costs one 503.
func warm(t *testing.T, env *apitest.Env, a *apitest.Tenant) {
	t.Helper()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			eventually(t, env, apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key})
		}()
	}
	wg.Wait()
}

// eventually sends req until it succeeds, as a client retries: allowing 503s while
// the pool replaces connections a fault broke (at most one per pooled connection),
// and 409s while an earlier attempt's transaction ends; it returns the success.
func eventually(t *testing.T, env *apitest.Env, req apitest.Request) *apitest.Response {
	t.Helper()
	for try := 0; ; try++ {
		res := apitest.Do(t, env, req)
		if res.Code < 300 {
			return res
		}
		if res.Code != 503 && res.Code != 409 || try == 40 {
			t.Fatalf("%s %s: %d %s", req.Method, req.Path, res.Code, res.Body.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestConnectionLossIs503: when the connections to PostgreSQL break — the backend
// hangs up (as when it dies) or resets them — every request that used one is
// answered 503 STORE_UNAVAILABLE with Retry-After and outcome not_executed, never
// 500 (issue 13, item 2), and the next requests are served on fresh connections.
func TestConnectionLossIs503(t *testing.T) {
	t.Parallel()
	env, px := proxied(t, 10*time.Second)
	a := env.Tenant("Acme")
	for _, fault := range []struct {
		name string
		cut  func()
	}{{"hang-up", px.Cut}, {"reset", px.Reset}} {
		for _, req := range []apitest.Request{
			{Method: "GET", Path: "/v2/risks", Bearer: a.Key},
			{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "unkeyed"}},
			{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Header: key("loss-" + fault.name), JSON: map[string]any{"title": "keyed"}},
		} {
			t.Run(fault.name+" "+req.Method+" "+req.Header.Get("Idempotency-Key"), func(t *testing.T) {
				warm(t, env, a)
				fault.cut()
				res := apitest.Do(t, env, req)
				if res.Code != 503 {
					// The pool may have noticed the cut before handing out a connection;
					// then the request must have been served normally.
					if res.Code >= 300 {
						t.Fatalf("after a %s: %d %s, want 503 or success", fault.name, res.Code, res.Body.String())
					}
					return
				}
				checkUnavailable(t, res, "not_executed")
				eventually(t, env, req)
			})
		}
	}
}

// TestTerminatedBackendsAre503: backends killed with pg_terminate_backend while
// requests run give 503 STORE_UNAVAILABLE with Retry-After, never 500; every keyed
// write then completes exactly once when retried. (PostgreSQL's goodbye, SQLSTATE
// 57P01, was classified before issue 13; this keeps it so. The hang-ups of
// TestConnectionLossIs503 were not.)
func TestTerminatedBackendsAre503(t *testing.T) {
	const killRounds = 60
	t.Parallel()
	env, _ := proxied(t, 10*time.Second)
	a := env.Tenant("Acme")
	admin, err := database.Open(context.Background(), env.App.Config.Database.URL, database.Options{MaxOpenConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	stop := make(chan struct{})
	var killer sync.WaitGroup
	killed := 0
	killer.Add(1)
	go func() {
		defer killer.Done()
		// Kill rounds are bounded (3 s of them), so that the writers finish however
		// slow the machine: on a loaded one a write that needs more than 50 ms
		// between two rounds would otherwise be retried for ever (it hung CI once).
		for range killRounds {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			var n int
			admin.Raw(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n)
			killed += n
		}
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 15 {
				k := fmt.Sprintf("terminate-%d-%d", w, i)
				for {
					res := apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key,
						Header: key(k), JSON: map[string]any{"title": k}})
					mu.Lock()
					statuses[res.Code]++
					mu.Unlock()
					if res.Code == 503 || res.Code == 409 {
						if res.Header().Get("Retry-After") == "" {
							t.Errorf("%d without Retry-After", res.Code)
						}
						continue
					}
					if res.Code != 201 {
						t.Errorf("key %s: %d %s", k, res.Code, res.Body.String())
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	killer.Wait()
	t.Logf("statuses %v, %d backends terminated", statuses, killed)
	if statuses[503] == 0 {
		t.Errorf("no request met a terminated backend: the test tested nothing")
	}
	var list struct{ Data []struct{ Title string } }
	// The last round of kills may have left dead connections in the pool.
	eventually(t, env, apitest.Request{Method: "GET", Path: "/v2/risks?limit=100", Bearer: a.Key}).Decode(&list)
	if len(list.Data) != 60 {
		t.Errorf("%d risks for 60 keys", len(list.Data))
	}
}

// TestFrozenStoreIs503: with PostgreSQL frozen (the proxy holds every byte), API-key
// authentication, a read, an unkeyed and a keyed write are each answered 503
// STORE_UNAVAILABLE within the lease instead of hanging for the whole freeze (issue
// 13, item 3); after the thaw the same requests succeed.
func TestFrozenStoreIs503(t *testing.T) {
	t.Parallel()
	const lease = 2 * time.Second
	const freeze = 20 * time.Second
	env, px := proxied(t, lease)
	a := env.Tenant("Acme")
	warm(t, env, a)
	px.Stall()
	thaw := time.AfterFunc(freeze, px.Restore)
	defer thaw.Stop()
	reqs := []apitest.Request{
		{Method: "GET", Path: "/v2/risks", Bearer: a.Key},
		{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "unkeyed"}},
		{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Header: key("frozen-1"), JSON: map[string]any{"title": "keyed"}},
	}
	var wg sync.WaitGroup
	for _, req := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			res := apitest.Do(t, env, req)
			took := time.Since(start)
			if took > lease+time.Second {
				t.Errorf("%s %s waited %s on a frozen store (lease %s, freeze %s)", req.Method, req.Path, took.Round(time.Millisecond), lease, freeze)
			}
			if res.Code != 503 {
				t.Errorf("%s %s on a frozen store: %d %s, want 503", req.Method, req.Path, res.Code, res.Body.String())
				return
			}
			doc := checkProblem(t, res, 503, "STORE_UNAVAILABLE")
			checkRetryAfter(t, res)
			if doc["outcome"] == nil {
				t.Errorf("503 without outcome: %s", res.Body.String())
			}
		}()
	}
	wg.Wait()
	px.Restore()
	for _, req := range reqs {
		eventually(t, env, req)
	}
}

// TestLostCommitIsUnknown: the connection dies after a write's COMMIT reached
// PostgreSQL and before its answer came back. The write is in fact committed, so the
// 503 must say outcome "unknown", never "not_executed" (issue 13, item 1), and the
// keyed retry replays it. The proxy recognises the final round trip of a keyed write
// by the stored response body, which travels in one pipeline with the COMMIT (the
// same JSON went out once before, as the risk.created event's object). An unkeyed
// write's COMMIT carries no parameter of its own: cut at its event's INSERT, before
// the COMMIT, it must say not_executed, and nothing is written.
func TestLostCommitIsUnknown(t *testing.T) {
	t.Parallel()
	env, px := proxied(t, 10*time.Second)
	a := env.Tenant("Acme")
	warm(t, env, a)

	keyed := apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Header: key("lost-commit-1"),
		JSON: map[string]any{"title": "keyed lost commit"}}
	px.CutAfterSkipping([]byte(`"title":"keyed lost commit"`), 1)
	lost := apitest.Do(t, env, keyed)
	checkUnavailable(t, lost, "unknown")
	if px.PatternCuts() != 1 {
		t.Fatalf("the proxy cut %d connections, want 1", px.PatternCuts())
	}
	px.Restore()
	res := eventually(t, env, keyed).Expect(201)
	if res.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("retry after a lost COMMIT ran again (Idempotent-Replayed %q): the write was committed", res.Header().Get("Idempotent-Replayed"))
	}

	// A write cut before its COMMIT: a risk update (read for update, write, event:
	// a transaction; an unkeyed create is one autocommit statement and has no such
	// point, TestUnkeyedLostCommitIsUnknown).
	created := apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key,
		JSON: map[string]any{"title": "to update"}}).Expect(201)
	var r struct{ ID string }
	created.Decode(&r)
	px.CutAfterSkipping([]byte("unkeyed lost commit"), 1)
	cut := apitest.Do(t, env, apitest.Request{Method: "PATCH", Path: "/v2/risks/" + r.ID, Bearer: a.Key,
		JSON: map[string]any{"title": "unkeyed lost commit"}})
	checkUnavailable(t, cut, "not_executed")
	px.Restore()
	// The request log says which, as the 503s did (docs/requests.md).
	for _, tt := range []struct {
		res                *apitest.Response
		idemOutcome, store string
	}{{lost, "store_unavailable", "unknown"}, {cut, "", "not_executed"}} {
		var e struct{ IdempotencyOutcome, StoreOutcome, ErrorCode *string }
		logged(t, env, a, tt.res.Header().Get("X-Request-Id")).Decode(&e)
		if deref(e.StoreOutcome) != tt.store || deref(e.IdempotencyOutcome) != tt.idemOutcome || deref(e.ErrorCode) != "STORE_UNAVAILABLE" {
			t.Errorf("log entry of a 503 %s: storeOutcome %q, idempotencyOutcome %q, errorCode %q", tt.store,
				deref(e.StoreOutcome), deref(e.IdempotencyOutcome), deref(e.ErrorCode))
		}
	}
	var list struct{ Data []struct{ Title string } }
	eventually(t, env, apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key}).Decode(&list)
	if len(list.Data) != 2 || !slices.ContainsFunc(list.Data, func(r struct{ Title string }) bool { return r.Title == "keyed lost commit" }) ||
		!slices.ContainsFunc(list.Data, func(r struct{ Title string }) bool { return r.Title == "to update" }) {
		t.Errorf("risks %+v after a lost COMMIT and an update cut before its COMMIT, want the committed one and the one not updated", list.Data)
	}
}

// TestUnreachableStoreIsNotExecuted: a keyed write refused because PostgreSQL cannot
// be reached at all is 503 outcome not_executed, and the retry with the same key runs
// it (once).
func TestUnreachableStoreIsNotExecuted(t *testing.T) {
	t.Parallel()
	env, px := proxied(t, 10*time.Second)
	a := env.Tenant("Acme")
	req := apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Header: key("unreachable-1"), JSON: map[string]any{"title": "t"}}
	px.Refuse(true)
	px.Cut()
	checkUnavailable(t, apitest.Do(t, env, req), "not_executed")
	px.Restore()
	res := eventually(t, env, req).Expect(201) // pooled connections the cut broke cost a 503 each
	if res.Header().Get("Idempotent-Replayed") != "false" {
		t.Errorf("Idempotent-Replayed = %q after not_executed, want false", res.Header().Get("Idempotent-Replayed"))
	}
}

// logged returns the request-log entry of the request rid, once the log's writer has
// stored it.
func logged(t *testing.T, env *apitest.Env, a *apitest.Tenant, rid string) *apitest.Response {
	t.Helper()
	if err := env.App.RequestLog.Flush(context.Background()); err != nil {
		t.Fatalf("flush the request log: %v", err)
	}
	return eventually(t, env, apitest.Request{Method: "GET", Path: "/v2/requests/" + rid, Bearer: a.Key})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestUnkeyedLostCommitIsUnknown: the answer to an unkeyed write's commit is lost —
// on PostgreSQL its one autocommit statement (the risk, its audit entry and event:
// database.ExecLast); the proxy forwards it, then drops what comes back and cuts.
// The risk is committed, so the 503 must say "unknown": a client told not_executed
// resends and doubles it (issue 25, item 1). pgx calls the lost answer safe to
// retry; only the sender knows the statement went out.
func TestUnkeyedLostCommitIsUnknown(t *testing.T) {
	t.Parallel()
	env, px := proxied(t, 10*time.Second)
	a := env.Tenant("Acme")
	warm(t, env, a)
	px.CutAfter([]byte("unkeyed commit answer lost"))
	checkUnavailable(t, apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key,
		JSON: map[string]any{"title": "unkeyed commit answer lost"}}), "unknown")
	if px.PatternCuts() != 1 {
		t.Fatalf("the proxy cut %d connections, want 1", px.PatternCuts())
	}
	px.Restore()
	var list struct{ Data []struct{ Title string } }
	eventually(t, env, apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key}).Decode(&list)
	if len(list.Data) != 1 {
		t.Errorf("risks %+v after a lost COMMIT answer, want the one committed", list.Data)
	}
}
