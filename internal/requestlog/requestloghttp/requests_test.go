package requestloghttp_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/apitest"
)

// row is what the test checks of one entry.
type row struct {
	status           int
	key, outcome, ec string
}

func rowOf(e entry) row {
	return row{status: e.Status, key: str(e.IdempotencyKey), outcome: str(e.IdempotencyOutcome), ec: str(e.ErrorCode)}
}

// TestEachOutcomeIsLogged: a keyed create, its replay, a 409 while it is in flight,
// a 422 reuse, a failed keyed write, an unkeyed create and a read each appear once,
// newest first, with their status, outcome, error code, route, credential and the
// request id their response carried.
func TestEachOutcomeIsLogged(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	post := func(key string, body map[string]any) *apitest.Response {
		r := apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, JSON: body}
		if key != "" {
			r.Header = http.Header{"Idempotency-Key": {key}}
		}
		return apitest.Do(t, env, r)
	}
	var ids []string // request ids, in order sent
	keep := func(res *apitest.Response) { ids = append(ids, res.Header().Get("X-Request-Id")) }

	keep(post("outcome-key-1", map[string]any{"title": "first"}).Expect(http.StatusCreated))
	keep(post("outcome-key-1", map[string]any{"title": "first"}).Expect(http.StatusCreated))
	keep(post("outcome-key-1", map[string]any{"title": "another"}).ExpectProblem(http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED"))

	// A keyed create held in flight by a lock on its table; a second request with
	// its key meanwhile is refused with 409.
	release := holdRiskWrites(t, env)
	slow := make(chan *apitest.Response)
	go func() {
		slow <- env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key,
			JSON: map[string]any{"title": "slow"}, Header: http.Header{"Idempotency-Key": {"outcome-key-2"}}})
	}()
	waitProcessing(t, env, a.Key, "outcome-key-2", "/v2/risks")
	conflict := post("outcome-key-2", map[string]any{"title": "slow"})
	conflict.ExpectProblem(http.StatusConflict, "IDEMPOTENCY_REQUEST_IN_PROGRESS")
	release()
	slowRes := <-slow
	slowRes.T = t
	slowRes.Expect(http.StatusCreated)

	keep(post("outcome-key-3", map[string]any{"likelihood": 9}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED"))
	keep(post("", map[string]any{"title": "unkeyed"}).Expect(http.StatusCreated))
	keep(apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/v2/risks", Bearer: a.Key}).Expect(http.StatusOK))

	all := list(t, env, a.Key, "")
	byID := map[string]entry{}
	for _, e := range all {
		byID[e.ID] = e
	}
	want := []row{
		{201, "outcome-key-1", "executed", "null"},
		{201, "outcome-key-1", "replayed", "null"},
		{422, "outcome-key-1", "key_reused", "IDEMPOTENCY_KEY_REUSED"},
		{400, "outcome-key-3", "failed", "VALIDATION_FAILED"},
		{201, "null", "null", "null"},
		{200, "null", "null", "null"},
	}
	for i, id := range ids {
		e, ok := byID[id]
		if !ok {
			t.Errorf("request %d (%s): no entry", i, id)
			continue
		}
		if diff := cmp.Diff(want[i], rowOf(e), cmp.AllowUnexported(row{})); diff != "" {
			t.Errorf("request %d (-want +got):\n%s", i, diff)
		}
		if e.Credential.Type != "api_key" || e.Credential.ID != a.KeyID || e.Route != "/v2/risks" || e.Path != "/v2/risks" || e.DurationMs < 0 {
			t.Errorf("request %d: credential %+v, route %q, path %q, durationMs %v", i, e.Credential, e.Route, e.Path, e.DurationMs)
		}
	}
	// The in-flight pair: the run and the refusal, side by side under their key.
	var pair []row
	for _, e := range list(t, env, a.Key, "idempotencyKey=outcome-key-2") {
		pair = append(pair, rowOf(e))
	}
	wantPair := []row{{201, "outcome-key-2", "executed", "null"}, {409, "outcome-key-2", "in_progress", "IDEMPOTENCY_REQUEST_IN_PROGRESS"}}
	if diff := cmp.Diff(wantPair, pair, cmp.AllowUnexported(row{})); diff != "" {
		t.Errorf("outcome-key-2's entries, newest first (-want +got):\n%s", diff)
	}
	// Newest first overall, and the log's and the inspector's own reads are logged.
	var writes int
	for _, e := range all {
		if e.Method == http.MethodPost {
			writes++
		}
	}
	if writes != 7 {
		t.Errorf("%d POST entries, want 7 (the 409 pair and the five above)", writes)
	}
	for i := 1; i < len(all); i++ {
		if all[i].CreatedAt.After(all[i-1].CreatedAt) {
			t.Errorf("entry %d is newer than entry %d", i, i-1)
		}
	}
	if got := list(t, env, a.Key, "method=GET&status=200"); len(got) < 2 || got[0].Route != "/v2/requests" {
		t.Errorf("the log's own reads: %d GET 200 entries, newest %+v", len(got), got)
	}
	metrics := apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/metrics"}).Expect(http.StatusOK).Body.String()
	if !strings.Contains(metrics, "riskapi_request_log_entries_written_total ") || strings.Contains(metrics, "riskapi_request_log_entries_written_total 0\n") ||
		!strings.Contains(metrics, `riskapi_request_log_entries_dropped_total{reason="buffer_full"} 0`) ||
		!strings.Contains(metrics, "riskapi_request_log_batch_duration_seconds_count") {
		t.Errorf("/metrics lacks the request log's series, or counts no entry written")
	}
}

// TestFiltersAndPaging: every filter narrows the list, a page of 2 walks it all
// newest first, and a bad filter is 400 naming the parameter.
func TestFiltersAndPaging(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	for i := range 3 {
		apitest.Do(t, env, apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "r"},
			Header: http.Header{"Idempotency-Key": {fmt.Sprintf("filter-key-%d", i)}}}).Expect(http.StatusCreated)
	}
	apitest.Do(t, env, apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "r"},
		Header: http.Header{"Idempotency-Key": {"filter-key-0"}}}).Expect(http.StatusCreated)
	apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/v2/risks/risk_nope", Bearer: a.Key}).Expect(http.StatusNotFound)
	flush(t, env)
	mid := time.Now()
	env.Clock.Advance(time.Hour) // later entries are an hour on
	apitest.Do(t, env, apitest.Request{Method: http.MethodDelete, Path: "/v2/risks/risk_nope", Bearer: a.Key}).Expect(http.StatusNotFound)

	count := func(query string) int { return len(list(t, env, a.Key, query)) }
	for _, tc := range []struct {
		query string
		want  int
	}{
		{"outcome=replayed", 1},
		{"outcome=executed", 3},
		{"idempotencyKey=filter-key-0", 2},
		{"status=404", 2},
		{"status=404&method=DELETE", 1},
		{"method=delete", 1},
		{"method=POST", 4},
		{"until=" + mid.UTC().Format(time.RFC3339Nano) + "&method=POST", 4},
		{"since=" + mid.Add(time.Minute).UTC().Format(time.RFC3339Nano) + "&status=404", 1},
	} {
		if got := count(tc.query); got != tc.want {
			t.Errorf("%s: %d entries, want %d", tc.query, got, tc.want)
		}
	}
	// Paging by 2: every entry once, newest first, the same as one big page.
	var paged []string
	q := "limit=2&method=POST"
	for {
		var p page
		apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/v2/requests?" + q, Bearer: a.Key}).Expect(http.StatusOK).Decode(&p)
		if len(p.Data) > 2 {
			t.Fatalf("page of %d", len(p.Data))
		}
		for _, e := range p.Data {
			paged = append(paged, e.ID)
		}
		if !p.HasMore {
			break
		}
		q = "limit=2&method=POST&cursor=" + *p.NextCursor
	}
	var whole []string
	for _, e := range list(t, env, a.Key, "method=POST&limit=100") {
		whole = append(whole, e.ID)
	}
	if diff := cmp.Diff(whole, paged); diff != "" || len(paged) != 4 {
		t.Errorf("paged by 2 vs one page (-one +paged):\n%s", diff)
	}
	for _, bad := range []string{"status=abc", "status=99", "method=TRACE", "outcome=taken_over", "since=yesterday",
		"until=2026-13-01T00:00:00Z", "idempotencyKey=short", "limit=0", "cursor=nope"} {
		field := bad[:strings.Index(bad, "=")]
		res := apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/v2/requests?" + bad, Bearer: a.Key}).
			ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
		if !strings.Contains(res.Body.String(), `"field":"`+field+`"`) {
			t.Errorf("%s: the problem does not name %s: %s", bad, field, res.Body)
		}
	}
}

// TestIsolationAndScope: another tenant sees none of the log (404 by id, nothing
// listed, 404 for a key), a key without requests:read gets 403, and a session user
// reads the tenant's log on /v1 — including the API key's requests.
func TestIsolationAndScope(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.Tenant("Acme"), env.Tenant("Beta")
	res := apitest.Do(t, env, apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "a"},
		Header: http.Header{"Idempotency-Key": {"isolated-key-1"}}}).Expect(http.StatusCreated)
	id := res.Header().Get("X-Request-Id")
	flush(t, env)

	apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/v2/requests/" + id, Bearer: a.Key}).Expect(http.StatusOK)
	apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/v2/requests/" + id, Bearer: b.Key}).ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	for _, e := range list(t, env, b.Key, "") {
		if e.ID == id || e.Credential.ID == a.KeyID {
			t.Errorf("tenant B lists A's entry %+v", e)
		}
	}
	inspect(t, env, a.Key, "isolated-key-1", "POST", "/v2/risks").Expect(http.StatusOK)
	inspect(t, env, b.Key, "isolated-key-1", "POST", "/v2/risks").ExpectProblem(http.StatusNotFound, "NOT_FOUND")

	for _, path := range []string{"/v2/requests", "/v2/requests/" + id, "/v2/idempotency-keys/isolated-key-1?method=POST&path=/v2/risks"} {
		apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: path, Bearer: a.ReadKey}).ExpectProblem(http.StatusForbidden, "FORBIDDEN")
	}

	session := login(t, env, a)
	var e entry
	apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/v1/requests/" + id, Bearer: session}).Expect(http.StatusOK).Decode(&e)
	if e.ID != id || e.Credential.Type != "api_key" {
		t.Errorf("/v1 view of the API key's request: %+v", e)
	}
	flush(t, env)
	var p page
	apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/v1/requests?limit=1", Bearer: session}).Expect(http.StatusOK).Decode(&p)
	if len(p.Data) != 1 || p.Data[0].Credential.Type != "session" || p.Data[0].Route != "/v1/requests/:id" {
		t.Errorf("newest /v1 entry: %+v", p.Data)
	}
}

// TestNothingSecretIsLogged sends unique markers in every place a secret or a body
// could travel — JSON and multipart bodies, the query, headers, cookies, a bad
// Idempotency-Key, passwords, the API key and session token themselves — and then
// searches every column of every row of the log for them.
func TestNothingSecretIsLogged(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	session := login(t, env, a)
	marker := func(place string) string { return "MARK" + place + "x9q" }
	risk := apitest.Do(t, env, apitest.Request{Method: http.MethodPost, Path: "/v2/risks?note=" + marker("query"), Bearer: a.Key,
		JSON:   map[string]any{"title": marker("body"), "description": marker("desc")},
		Header: http.Header{"X-Custom": {marker("header")}, "Idempotency-Key": {"secret-test-1"}}}).Expect(http.StatusCreated).Map()
	apitest.Do(t, env, apitest.Request{Method: http.MethodPatch, Path: "/v1/risks/" + risk["id"].(string), Bearer: session,
		JSON: map[string]any{"owner": marker("patch")}}).Expect(http.StatusOK)
	apitest.Do(t, env, apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "x"},
		Header: http.Header{"Idempotency-Key": {"bad key " + marker("badkey")}}}).ExpectProblem(http.StatusBadRequest, "IDEMPOTENCY_KEY_INVALID")
	apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/v1/risks", Header: http.Header{"Cookie": {"session=" + session + "; other=" + marker("cookie")}}}).Expect(http.StatusOK)
	apitest.Do(t, env, apitest.Request{Method: http.MethodPost, Path: "/v1/sessions", JSON: map[string]string{"email": a.Email, "password": marker("password")}}).Expect(http.StatusUnauthorized)
	apitest.Do(t, env, apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": marker("invalid"), "impact": 77}}).
		ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	flush(t, env)

	rows := rowsAsText(t, env, "request_log_entries")
	if len(rows) < 5 {
		t.Fatalf("only %d entries logged", len(rows))
	}
	// What never authenticated (the failed sign-in) is not logged at all.
	var unauthenticated int64
	if err := env.App.DB.Table("request_log_entries").Where("status = 401").Count(&unauthenticated).Error; err != nil || unauthenticated != 0 {
		t.Errorf("%d entries of unauthenticated requests (%v)", unauthenticated, err)
	}
	secrets := map[string]string{"API key": a.Key, "session token": session, "password": a.Password}
	for _, place := range []string{"query", "body", "desc", "header", "patch", "badkey", "cookie", "password", "invalid"} {
		secrets[place] = marker(place)
	}
	for what, s := range secrets {
		for _, r := range rows {
			if strings.Contains(r, s) {
				t.Errorf("the %s is in the request log: %s", what, r)
			}
		}
	}
}
