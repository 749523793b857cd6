package riskhttp_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/riskapi/riskapi/internal/apitest"
)

// risk is a risk as a client decodes it.
type risk struct {
	ID          string    `json:"id"`
	Title       string    `json:"title"`
	Description string    `json:"description"`
	Category    string    `json:"category"`
	Likelihood  *int      `json:"likelihood"`
	Impact      *int      `json:"impact"`
	RiskScore   *int      `json:"riskScore"`
	Status      string    `json:"status"`
	Owner       string    `json:"owner"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

type page struct {
	Data       []risk  `json:"data"`
	HasMore    bool    `json:"hasMore"`
	NextCursor *string `json:"nextCursor"`
}

type problemBody struct {
	Type, Title, Detail, Code, RequestID string
	Status                               int
	Errors                               []struct{ Field, Detail string }
}

func ptr(n int) *int { return &n }

func decodeRisk(r *apitest.Response) risk {
	r.T.Helper()
	var v risk
	r.Decode(&v)
	return v
}

// create makes a risk through /v2 with key and returns it.
func create(env *apitest.Env, key string, body any) risk {
	env.T.Helper()
	return decodeRisk(env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: key, JSON: body}).
		Expect(http.StatusCreated))
}

// expectInvalid checks a 400 VALIDATION_FAILED whose first error names field and whose
// detail mentions it.
func expectInvalid(t *testing.T, r *apitest.Response, field string) {
	t.Helper()
	r.ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	var p problemBody
	r.Decode(&p)
	if len(p.Errors) == 0 || p.Errors[0].Field != field {
		t.Fatalf("errors = %+v, want the first to name %q; body %s", p.Errors, field, r.Body.String())
	}
	if !strings.Contains(p.Detail, field) {
		t.Errorf("detail %q does not mention %q", p.Detail, field)
	}
}

// namedFields checks a 400 VALIDATION_FAILED and returns the fields its errors name, in order.
func namedFields(r *apitest.Response) []string {
	r.ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	var p problemBody
	r.Decode(&p)
	var named []string
	for _, e := range p.Errors {
		named = append(named, e.Field)
	}
	return named
}

func TestCreateRisk(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	for _, version := range []string{"v1", "v2"} {
		t.Run(version, func(t *testing.T) {
			req := apitest.Request{Method: http.MethodPost, Path: "/" + version + "/risks", Bearer: a.Key,
				JSON: map[string]any{"title": "Vendor contract missing a DPA", "category": "Third-Party",
					"likelihood": 3, "impact": 4}}
			if version == "v1" {
				req.Bearer = apitest.Login(env.T, env, a).Token
			}
			res := apitest.Do(t, env, req).Expect(http.StatusCreated)
			got := decodeRisk(res)
			if !strings.HasPrefix(got.ID, "risk_") {
				t.Errorf("id = %q, want the risk_ prefix", got.ID)
			}
			if loc, want := res.Header().Get("Location"), "/"+version+"/risks/"+got.ID; loc != want {
				t.Errorf("Location = %q, want %q", loc, want)
			}
			want := risk{ID: got.ID, Title: "Vendor contract missing a DPA", Category: "Third-Party",
				Likelihood: ptr(3), Impact: ptr(4), RiskScore: ptr(12), Status: "open",
				CreatedAt: got.CreatedAt, UpdatedAt: got.CreatedAt}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("created risk (-want +got):\n%s", diff)
			}
			// What was returned is what is stored.
			req.Method, req.Path, req.JSON = http.MethodGet, res.Header().Get("Location"), nil
			if diff := cmp.Diff(got, decodeRisk(apitest.Do(t, env, req).Expect(http.StatusOK))); diff != "" {
				t.Errorf("GET Location differs from the creation response (-created +read):\n%s", diff)
			}
		})
	}
}

func TestCreateRiskAccepts(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	tests := []struct {
		name     string
		body     string
		wantRisk risk
	}{
		{"title only", `{"title":"t"}`, risk{Title: "t", Status: "open"}},
		{"200 characters", `{"title":"` + strings.Repeat("é", 200) + `"}`, risk{Title: strings.Repeat("é", 200), Status: "open"}},
		{"3.0 is the integer 3", `{"title":"t","likelihood":3.0,"impact":2e0}`,
			risk{Title: "t", Likelihood: ptr(3), Impact: ptr(2), RiskScore: ptr(6), Status: "open"}},
		{"given score kept", `{"title":"t","likelihood":3,"impact":4,"riskScore":5}`,
			risk{Title: "t", Likelihood: ptr(3), Impact: ptr(4), RiskScore: ptr(5), Status: "open"}},
		{"no score without both factors", `{"title":"t","likelihood":3}`,
			risk{Title: "t", Likelihood: ptr(3), Status: "open"}},
		{"null is not given", `{"title":"t","likelihood":null,"status":null}`, risk{Title: "t", Status: "open"}},
		{"every field", `{"title":"t","description":"d","category":"c","likelihood":5,"impact":5,"status":"closed","owner":"o"}`,
			risk{Title: "t", Description: "d", Category: "c", Likelihood: ptr(5), Impact: ptr(5), RiskScore: ptr(25),
				Status: "closed", Owner: "o"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decodeRisk(apitest.Do(t, env, apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, Body: tt.body}).
				Expect(http.StatusCreated))
			if diff := cmp.Diff(tt.wantRisk, got, cmpopts.IgnoreFields(risk{}, "ID", "CreatedAt", "UpdatedAt")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteValidation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	existing := create(env, a.Key, map[string]any{"title": "kept", "likelihood": 2, "impact": 2})
	item := "/v2/risks/" + existing.ID
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		field  string
	}{
		{"title missing", "POST", "/v2/risks", `{"category":"c"}`, "title"},
		{"title null", "POST", "/v2/risks", `{"title":null}`, "title"},
		{"title empty", "POST", "/v2/risks", `{"title":""}`, "title"},
		{"title 201 characters", "POST", "/v2/risks", `{"title":"` + strings.Repeat("x", 201) + `"}`, "title"},
		{"title a number", "POST", "/v2/risks", `{"title":7}`, "title"},
		{"likelihood 0", "POST", "/v2/risks", `{"title":"t","likelihood":0}`, "likelihood"},
		{"likelihood 6", "POST", "/v2/risks", `{"title":"t","likelihood":6}`, "likelihood"},
		{"likelihood a string", "POST", "/v2/risks", `{"title":"t","likelihood":"3"}`, "likelihood"},
		{"likelihood 3.5", "POST", "/v2/risks", `{"title":"t","likelihood":3.5}`, "likelihood"},
		{"likelihood huge", "POST", "/v2/risks", `{"title":"t","likelihood":1e400}`, "likelihood"},
		{"impact 6", "POST", "/v2/risks", `{"title":"t","impact":6}`, "impact"},
		{"riskScore 26", "POST", "/v2/risks", `{"title":"t","riskScore":26}`, "riskScore"},
		{"status unknown", "POST", "/v2/risks", `{"title":"t","status":"pending"}`, "status"},
		{"description too long", "POST", "/v2/risks", `{"title":"t","description":"` + strings.Repeat("d", 10001) + `"}`, "description"},
		{"unknown field", "POST", "/v2/risks", `{"title":"t","severity":"high"}`, "severity"},
		{"read-only field", "POST", "/v2/risks", `{"title":"t","id":"risk_x"}`, "id"},
		{"duplicate key", "POST", "/v2/risks", `{"title":"a","title":"b"}`, "title"},
		{"invalid JSON", "POST", "/v2/risks", `{"title":`, "body"},
		{"trailing garbage", "POST", "/v2/risks", `{"title":"t"} x`, "body"},
		{"not an object", "POST", "/v2/risks", `["title"]`, "body"},
		{"empty body", "POST", "/v2/risks", ``, "body"},
		{"invalid UTF-8", "POST", "/v2/risks", "{\"title\":\"\xff\"}", "title"},
		{"PUT without title", "PUT", item, `{"category":"c"}`, "title"},
		{"PUT likelihood 0", "PUT", item, `{"title":"t","likelihood":0}`, "likelihood"},
		{"PUT unknown field", "PUT", item, `{"title":"t","severity":1}`, "severity"},
		{"PATCH title empty", "PATCH", item, `{"title":""}`, "title"},
		{"PATCH title null", "PATCH", item, `{"title":null}`, "title"},
		{"PATCH status null", "PATCH", item, `{"status":null}`, "status"},
		{"PATCH impact 6", "PATCH", item, `{"impact":6}`, "impact"},
		{"PATCH impact 2.5", "PATCH", item, `{"impact":2.5}`, "impact"},
		{"PATCH unknown field", "PATCH", item, `{"severity":1}`, "severity"},
		{"PATCH duplicate key", "PATCH", item, `{"owner":"a","owner":"b"}`, "owner"},
		{"PATCH invalid JSON", "PATCH", item, `{`, "body"},
		{"PATCH null document", "PATCH", item, `null`, "body"},
		{"PATCH lone surrogate", "PATCH", item, `{"owner":"\ud800"}`, "owner"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := apitest.Do(t, env, apitest.Request{Method: tt.method, Path: tt.path, Bearer: a.Key, Body: tt.body,
				Header: http.Header{"Content-Type": {"application/json"}}})
			expectInvalid(t, res, tt.field)
		})
	}
	// Refused writes changed nothing.
	if diff := cmp.Diff(existing, decodeRisk(env.Do(apitest.Request{Method: "GET", Path: item, Bearer: a.Key}).
		Expect(http.StatusOK))); diff != "" {
		t.Errorf("a refused write changed the risk (-before +after):\n%s", diff)
	}
	var all page
	env.Do(apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key}).Expect(http.StatusOK).Decode(&all)
	if len(all.Data) != 1 {
		t.Errorf("list has %d risks after refused creates, want 1", len(all.Data))
	}
}

// TestWriteValidationNamesEveryField: a refused body names every offending field in
// one 400 (docs/errors.md), not the first alone, so a client fixes it in one round.
func TestWriteValidationNamesEveryField(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	item := "/v2/risks/" + create(env, a.Key, map[string]any{"title": "kept"}).ID
	tests := []struct {
		name, method, path, body string
		fields                   []string
	}{
		{"title missing, factor out of range", "POST", "/v2/risks", `{"likelihood":9,"status":"pending"}`, []string{"title", "likelihood", "status"}},
		{"three wrong types", "POST", "/v2/risks", `{"title":5,"likelihood":"3","impact":2.5}`, []string{"title", "likelihood", "impact"}},
		{"unknown fields and a wrong type", "POST", "/v2/risks", `{"foo":1,"bar":2,"title":7}`, []string{"foo", "bar", "title"}},
		{"PATCH: a fraction and an unknown field", "PATCH", item, `{"impact":2.5,"severity":1}`, []string{"impact", "severity"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := apitest.Do(t, env, apitest.Request{Method: tt.method, Path: tt.path, Bearer: a.Key, Body: tt.body,
				Header: http.Header{"Content-Type": {"application/json"}}})
			if diff := cmp.Diff(tt.fields, namedFields(res)); diff != "" {
				t.Errorf("fields named (-want +got):\n%s\nbody %s", diff, res.Body.String())
			}
		})
	}
}

func TestPatchChangesOnlyGivenFields(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	full := map[string]any{"title": "t", "description": "d", "category": "c", "likelihood": 3,
		"impact": 4, "status": "open", "owner": "o"}
	tests := []struct {
		name   string
		patch  string
		change func(*risk)
	}{
		{"status", `{"status":"mitigated"}`, func(r *risk) { r.Status = "mitigated" }},
		{"title and owner", `{"title":"new","owner":"bob"}`, func(r *risk) { r.Title, r.Owner = "new", "bob" }},
		{"empty text", `{"description":""}`, func(r *risk) { r.Description = "" }},
		{"likelihood derives the score", `{"likelihood":5}`, func(r *risk) { r.Likelihood, r.RiskScore = ptr(5), ptr(20) }},
		{"given score wins", `{"impact":1,"riskScore":9}`, func(r *risk) { r.Impact, r.RiskScore = ptr(1), ptr(9) }},
		{"null clears a number", `{"riskScore":null}`, func(r *risk) { r.RiskScore = nil }},
		{"nothing", `{}`, nil},
		{"the same values", `{"title":"t","likelihood":3}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := create(env, a.Key, full)
			env.Clock.Advance(time.Second)
			got := decodeRisk(apitest.Do(t, env, apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + before.ID,
				Bearer: a.Key, Body: tt.patch}).Expect(http.StatusOK))
			want := before
			if tt.change == nil {
				// A PATCH that changes nothing is no change: not even updatedAt moves.
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("a PATCH changing nothing changed the risk (-want +got):\n%s", diff)
				}
			} else {
				tt.change(&want)
				if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(risk{}, "UpdatedAt")); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				if !got.UpdatedAt.After(before.UpdatedAt) {
					t.Errorf("updatedAt not moved forward: %s → %s", before.UpdatedAt, got.UpdatedAt)
				}
			}
			read := decodeRisk(apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + before.ID, Bearer: a.Key}).
				Expect(http.StatusOK))
			if diff := cmp.Diff(got, read); diff != "" {
				t.Errorf("stored risk differs from the PATCH response (-response +stored):\n%s", diff)
			}
		})
	}
}

func TestPutReplacesEverything(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	before := create(env, a.Key, map[string]any{"title": "t", "description": "d", "category": "c",
		"likelihood": 3, "impact": 4, "status": "mitigated", "owner": "o"})
	env.Clock.Advance(time.Second)
	got := decodeRisk(env.Do(apitest.Request{Method: http.MethodPut, Path: "/v2/risks/" + before.ID, Bearer: a.Key,
		JSON: map[string]any{"title": "replaced", "impact": 2}}).Expect(http.StatusOK))
	want := risk{ID: before.ID, Title: "replaced", Impact: ptr(2), Status: "open", CreatedAt: before.CreatedAt,
		UpdatedAt: got.UpdatedAt}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !got.UpdatedAt.After(before.UpdatedAt) {
		t.Errorf("updatedAt unchanged by PUT: %s", got.UpdatedAt)
	}
	read := decodeRisk(env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + before.ID, Bearer: a.Key}).
		Expect(http.StatusOK))
	if diff := cmp.Diff(got, read); diff != "" {
		t.Errorf("stored risk differs from the PUT response (-response +stored):\n%s", diff)
	}
}

func TestDelete(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	gone := create(env, a.Key, map[string]any{"title": "gone"})
	kept := create(env, a.Key, map[string]any{"title": "kept"})
	res := env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v2/risks/" + gone.ID, Bearer: a.Key}).
		Expect(http.StatusNoContent)
	if res.Body.Len() != 0 {
		t.Errorf("204 with a body: %q", res.Body.String())
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete, http.MethodPatch, http.MethodPut} {
		env.Do(apitest.Request{Method: m, Path: "/v2/risks/" + gone.ID, Bearer: a.Key, JSON: map[string]any{"title": "x"}}).
			ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	}
	var all page
	env.Do(apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key}).Expect(http.StatusOK).Decode(&all)
	if diff := cmp.Diff([]risk{kept}, all.Data); diff != "" {
		t.Errorf("list after delete (-want +got):\n%s", diff)
	}
}

func TestUnknownRiskIDs(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	for _, id := range []string{
		"risk_0193b2c4d5e67f8091a2b3c4d5e6f708", // the right shape, never issued
		"risk_nope", "ten_0193b2c4d5e67f8091a2b3c4d5e6f708", "RISK_0193B2C4D5E67F8091A2B3C4D5E6F708",
	} {
		for _, m := range []string{http.MethodGet, http.MethodPatch, http.MethodPut, http.MethodDelete} {
			t.Run(m+" "+id, func(t *testing.T) {
				apitest.Do(t, env, apitest.Request{Method: m, Path: "/v2/risks/" + id, Bearer: a.Key, JSON: map[string]any{"title": "x"}}).
					ExpectProblem(http.StatusNotFound, "NOT_FOUND")
			})
		}
	}
}

func TestListPagination(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	var created []string
	for i := range 5 {
		created = append(created, create(env, a.Key, map[string]any{"title": fmt.Sprintf("risk %d", i)}).ID)
	}
	newestFirst := make([]string, len(created))
	for i, id := range created {
		newestFirst[len(created)-1-i] = id
	}

	var seen []string
	var sizes []int
	var hasMore []bool
	path := "/v2/risks?limit=2"
	for range 10 {
		var p page
		env.Do(apitest.Request{Method: "GET", Path: path, Bearer: a.Key}).Expect(http.StatusOK).Decode(&p)
		sizes, hasMore = append(sizes, len(p.Data)), append(hasMore, p.HasMore)
		for _, r := range p.Data {
			seen = append(seen, r.ID)
		}
		if p.HasMore != (p.NextCursor != nil) {
			t.Fatalf("hasMore %v but nextCursor %v", p.HasMore, p.NextCursor)
		}
		if !p.HasMore {
			break
		}
		path = "/v2/risks?limit=2&cursor=" + *p.NextCursor
	}
	if diff := cmp.Diff([]int{2, 2, 1}, sizes); diff != "" {
		t.Errorf("page sizes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{true, true, false}, hasMore); diff != "" {
		t.Errorf("hasMore per page (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(newestFirst, seen); diff != "" {
		t.Errorf("risks across pages: duplicates, gaps or wrong order (-want +got):\n%s", diff)
	}

	// The default page holds them all, in the same order, and ends there.
	var p page
	env.Do(apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key}).Expect(http.StatusOK).Decode(&p)
	var ids []string
	for _, r := range p.Data {
		ids = append(ids, r.ID)
	}
	if diff := cmp.Diff(newestFirst, ids); diff != "" || p.HasMore || p.NextCursor != nil {
		t.Errorf("default page: hasMore %v, nextCursor %v, ids (-want +got):\n%s", p.HasMore, p.NextCursor, diff)
	}
	// An exact fit does not promise a further page.
	env.Do(apitest.Request{Method: "GET", Path: "/v2/risks?limit=5", Bearer: a.Key}).Expect(http.StatusOK).Decode(&p)
	if len(p.Data) != 5 || p.HasMore || p.NextCursor != nil {
		t.Errorf("limit=5 of 5: %d risks, hasMore %v, nextCursor %v", len(p.Data), p.HasMore, p.NextCursor)
	}
	// A risk created mid-walk does not shift later pages.
	var first page
	env.Do(apitest.Request{Method: "GET", Path: "/v2/risks?limit=2", Bearer: a.Key}).Expect(http.StatusOK).Decode(&first)
	create(env, a.Key, map[string]any{"title": "late"})
	var second page
	env.Do(apitest.Request{Method: "GET", Path: "/v2/risks?limit=2&cursor=" + *first.NextCursor, Bearer: a.Key}).
		Expect(http.StatusOK).Decode(&second)
	if len(second.Data) != 2 || second.Data[0].ID != newestFirst[2] {
		t.Errorf("second page after a new risk starts at %v, want %s", second.Data, newestFirst[2])
	}
}

func TestListEmpty(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	res := env.Do(apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key}).Expect(http.StatusOK)
	if got, want := strings.TrimSpace(res.Body.String()), `{"data":[],"hasMore":false,"nextCursor":null}`; got != want {
		t.Errorf("empty list = %s, want %s", got, want)
	}
}

func TestListBadParameters(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	tests := []struct{ query, field string }{
		{"limit=0", "limit"},
		{"limit=101", "limit"},
		{"limit=-1", "limit"},
		{"limit=abc", "limit"},
		{"limit=2.5", "limit"},
		{"cursor=!!!", "cursor"},
		{"cursor=Zm9v", "cursor"}, // base64 of "foo": not an ID
		{"limit=2&cursor=%20", "cursor"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			expectInvalid(t, apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks?" + tt.query, Bearer: a.Key}), tt.field)
		})
	}
	for _, q := range []string{"limit=1", "limit=100"} {
		env.Do(apitest.Request{Method: "GET", Path: "/v2/risks?" + q, Bearer: a.Key}).Expect(http.StatusOK)
	}
}
