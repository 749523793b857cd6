package followuphttp_test

import (
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/apiversion"
	"github.com/riskapi/riskapi/internal/tenants"
)

// TestMyWork: GET /v1/my-work shows the signed-in user the reviews due (within
// REVIEW_DUE_DAYS) and overdue on risks they own, earliest first, their open
// actions by due date (undated last), and — for an admin — the pending acceptances
// others requested; nobody else's, no closed risk, no far review, no done action;
// bounded by limit; an API key has no My work.
func TestMyWork(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	me := env.User(a.ID, tenants.RoleAdmin)
	other := env.User(a.ID, tenants.RoleMember)
	day := today(env)
	date := func(days int) string { return day.AddDate(0, 0, days).Format("2006-01-02") }
	newest := http.Header{apiversion.Header: {string(apiversion.V20270115)}}
	risk := func(title, owner, reviewDate, status string) string {
		body := map[string]any{"title": title, "owner": map[string]any{"userId": owner}, "reviewDate": reviewDate}
		if status != "" {
			body["status"] = status
		}
		var r struct{ ID string }
		env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, Header: newest, JSON: body}).
			Expect(http.StatusCreated).Decode(&r)
		return r.ID
	}
	overdue := risk("late", me.ID, date(-3), "")
	soon := risk("soon", me.ID, date(2), "")
	today0 := risk("today", me.ID, date(0), "")
	risk("far", me.ID, date(30), "")
	risk("closed", me.ID, date(-3), "closed")
	risk("theirs", other.ID, date(-3), "")
	action := func(title, owner string, due any) string {
		body := map[string]any{"title": title, "ownerId": owner}
		if due != nil {
			body["dueDate"] = due
		}
		return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + soon + "/actions", Bearer: a.Key, JSON: body}).
			Expect(http.StatusCreated).Map()["id"].(string)
	}
	undated := action("undated", me.ID, nil)
	later := action("later", me.ID, date(5))
	first := action("first", me.ID, date(-1))
	done := action("done", me.ID, date(1))
	env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v2/actions/" + done, Bearer: a.Key,
		JSON: map[string]any{"status": "done"}}).Expect(http.StatusOK)
	action("theirs", other.ID, date(1))
	request := func(tok string) string {
		return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/risks/" + overdue + "/acceptances", Bearer: tok,
			JSON: map[string]any{"justification": "j", "validUntil": date(30)}}).Expect(http.StatusCreated).Map()["id"].(string)
	}
	theirRequest := request(other.Token)
	request(me.Token) // mine: another admin decides it

	type work struct {
		ReviewDueDays int
		Reviews       struct {
			Data []struct {
				RiskID, Title, ReviewDate, State string
			}
			HasMore bool
		}
		Actions struct {
			Data    []struct{ ID string }
			HasMore bool
		}
		Acceptances struct {
			Data    []struct{ ID string }
			HasMore bool
		}
	}
	var w work
	res := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/my-work", Bearer: me.Token}).Expect(http.StatusOK)
	apitest.LoadSpec(t, "../../../docs/openapi.yaml").Check(t, http.MethodGet, "/v1/my-work", nil, res)
	res.Decode(&w)
	if w.ReviewDueDays != 7 {
		t.Errorf("reviewDueDays = %d, want the default 7", w.ReviewDueDays)
	}
	var reviews []string
	for _, r := range w.Reviews.Data {
		reviews = append(reviews, r.RiskID+":"+r.State)
	}
	if want := []string{overdue + ":overdue", today0 + ":due", soon + ":due"}; !same(reviews, want) {
		t.Errorf("reviews %v, want %v", reviews, want)
	}
	var actions []string
	for _, x := range w.Actions.Data {
		actions = append(actions, x.ID)
	}
	if want := []string{first, later, undated}; !same(actions, want) {
		t.Errorf("actions %v, want %v (by due date, undated last)", actions, want)
	}
	if len(w.Acceptances.Data) != 1 || w.Acceptances.Data[0].ID != theirRequest {
		t.Errorf("acceptances %v, want only %s (requested by another)", w.Acceptances.Data, theirRequest)
	}

	// A member decides no acceptance: theirs is empty; their own review shows.
	var m work
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/my-work", Bearer: other.Token}).Expect(http.StatusOK).Decode(&m)
	if len(m.Acceptances.Data) != 0 || len(m.Reviews.Data) != 1 || len(m.Actions.Data) != 1 {
		t.Errorf("member's work %+v: want 1 review, 1 action, no acceptances", m)
	}

	var bounded work
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/my-work?limit=2", Bearer: me.Token}).Expect(http.StatusOK).Decode(&bounded)
	if len(bounded.Reviews.Data) != 2 || !bounded.Reviews.HasMore || len(bounded.Actions.Data) != 2 || !bounded.Actions.HasMore ||
		bounded.Acceptances.HasMore {
		t.Errorf("limit=2: %+v", bounded)
	}
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/my-work?limit=0", Bearer: me.Token}).
		ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/my-work?owner=x", Bearer: me.Token}).
		ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/my-work", Bearer: a.Key}).Expect(http.StatusUnauthorized)
}

func same(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
