package riskhttp_test

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
)

// full is a risk with the register's fields, as a client decodes it.
type full struct {
	ID                 string            `json:"id"`
	Title              string            `json:"title"`
	Description        string            `json:"description"`
	Category           string            `json:"category"`
	Owner              string            `json:"owner"`
	Status             string            `json:"status"`
	Likelihood         *int              `json:"likelihood"`
	Impact             *int              `json:"impact"`
	RiskScore          *int              `json:"riskScore"`
	Treatment          *string           `json:"treatment"`
	ReviewDate         *string           `json:"reviewDate"`
	ResidualLikelihood *int              `json:"residualLikelihood"`
	ResidualImpact     *int              `json:"residualImpact"`
	ResidualScore      *int              `json:"residualScore"`
	Metadata           map[string]string `json:"metadata"`
	Version            int64             `json:"version"`
	CreatedAt          time.Time         `json:"createdAt"`
	UpdatedAt          time.Time         `json:"updatedAt"`
}

// register fills a tenant with risks that differ in every filtered and sorted
// field, with ties in title, score and review date, and some fields unset.
func register(t *testing.T, env *apitest.Env, key string) []full {
	t.Helper()
	titles := []string{"Vendor DPA missing", "vendor access review", "S3 bucket public", "Backup untested",
		"alpha", "Zeta", "vendor access review"}
	descs := []string{"no DPA signed", "", "public S3 bucket with PII", "restore never tried", "Vendor lock-in"}
	statuses := []string{"open", "mitigated", "closed"}
	treatments := []any{nil, "accept", "mitigate", "transfer", "avoid"}
	var out []full
	for i := range 24 {
		body := map[string]any{"title": titles[i%len(titles)], "description": descs[i%len(descs)],
			"category": []string{"Cloud", "Legal", "cloud"}[i%3], "owner": []string{"alice", "bob", "", "Alice"}[i%4],
			"status": statuses[i%3], "treatment": treatments[i%5]}
		if i%5 != 0 {
			body["likelihood"], body["impact"] = 1+i%5, 1+(i*3)%5
		}
		if i%4 != 0 {
			body["reviewDate"] = fmt.Sprintf("2026-0%d-1%d", 1+i%3, i%2)
		}
		if i%3 != 0 {
			body["residualLikelihood"], body["residualImpact"] = 1+i%2, 1+i%4
		}
		if i%2 == 0 {
			body["metadata"] = map[string]string{"team": []string{"ops", "dev"}[i%4/2], "n": fmt.Sprint(i)}
		}
		var r full
		env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: key, JSON: body}).
			Expect(http.StatusCreated).Decode(&r)
		out = append(out, r)
		env.Clock.Advance(time.Second)
	}
	// Later changes, so updatedAt orders otherwise than createdAt.
	for _, i := range []int{3, 0, 17} {
		var r full
		env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v2/risks/" + out[i].ID, Bearer: key,
			JSON: map[string]any{"owner": "carol"}}).Expect(http.StatusOK).Decode(&r)
		out[i] = r
		env.Clock.Advance(time.Second)
	}
	return out
}

// listAll pages through /v2/risks?query with limit, failing when a risk is visited
// twice, and returns the risks in the order listed.
func listAll(t *testing.T, env *apitest.Env, key, query string, limit int) []full {
	t.Helper()
	var out []full
	seen := map[string]bool{}
	cursor := ""
	for range 100 {
		path := fmt.Sprintf("/v2/risks?limit=%d", limit)
		if query != "" {
			path += "&" + query
		}
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		var p struct {
			Data       []full
			HasMore    bool
			NextCursor *string
		}
		env.Do(apitest.Request{Method: http.MethodGet, Path: path, Bearer: key}).Expect(http.StatusOK).Decode(&p)
		for _, r := range p.Data {
			if seen[r.ID] {
				t.Fatalf("%s: %s listed twice", query, r.ID)
			}
			seen[r.ID] = true
		}
		out = append(out, p.Data...)
		if !p.HasMore {
			return out
		}
		cursor = *p.NextCursor
	}
	t.Fatalf("%s: no last page after 100", query)
	return nil
}

// nullsLast compares optional keys, a missing one after every present one whatever
// the direction (desc applies to present keys only).
func nullsLast[T cmp.Ordered](a, b *T, desc bool) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	case desc:
		return cmp.Compare(*b, *a)
	}
	return cmp.Compare(*a, *b)
}

// ordered sorts rs as sort (createdAt, -riskScore, …) says: by the field, nulls
// last, ties by id in the same direction.
func ordered(rs []full, sort string) []full {
	field, desc := strings.CutPrefix(sort, "-")
	out := slices.Clone(rs)
	slices.SortFunc(out, func(a, b full) int {
		var c int
		switch field {
		case "createdAt":
			c = a.CreatedAt.Compare(b.CreatedAt)
		case "updatedAt":
			c = a.UpdatedAt.Compare(b.UpdatedAt)
		case "title":
			c = strings.Compare(a.Title, b.Title)
		case "riskScore":
			return cmp.Or(nullsLast(a.RiskScore, b.RiskScore, desc), byID(a, b, desc))
		case "reviewDate":
			return cmp.Or(nullsLast(a.ReviewDate, b.ReviewDate, desc), byID(a, b, desc))
		case "residualScore":
			return cmp.Or(nullsLast(a.ResidualScore, b.ResidualScore, desc), byID(a, b, desc))
		}
		if desc {
			c = -c
		}
		return cmp.Or(c, byID(a, b, desc))
	})
	return out
}

func byID(a, b full, desc bool) int {
	if desc {
		return strings.Compare(b.ID, a.ID)
	}
	return strings.Compare(a.ID, b.ID)
}

func idsOf(rs []full) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func has(words string, r full) bool {
	for _, w := range strings.Fields(strings.ToLower(words)) {
		if !strings.Contains(strings.ToLower(r.Title), w) && !strings.Contains(strings.ToLower(r.Description), w) {
			return false
		}
	}
	return true
}

// TestListFiltersAndSorts: every filter, q and every sort in both directions list
// exactly the matching risks in order, and paging visits each once — compared with
// the same selection made here by hand. Another tenant's risks never show.
func TestListFiltersAndSorts(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.Tenant("Acme"), env.Tenant("Beta")
	all := register(t, env, a.Key)
	register(t, env, b.Key) // never listed for A
	since, until := all[8].CreatedAt, all[15].CreatedAt
	updated := all[20].UpdatedAt
	score := func(lo, hi int) func(full) bool {
		return func(r full) bool { return r.RiskScore != nil && *r.RiskScore >= lo && *r.RiskScore <= hi }
	}
	is := func(v *int, n int) bool { return v != nil && *v == n }
	factor := func(of func(full) *int, ns ...int) func(full) bool {
		return func(r full) bool { return of(r) != nil && slices.Contains(ns, *of(r)) }
	}
	filters := []struct {
		query string
		keep  func(full) bool
	}{
		{"", func(full) bool { return true }},
		{"status=open", func(r full) bool { return r.Status == "open" }},
		{"status=open,closed", func(r full) bool { return r.Status != "mitigated" }},
		{"treatment=accept,avoid", func(r full) bool {
			return r.Treatment != nil && (*r.Treatment == "accept" || *r.Treatment == "avoid")
		}},
		// The whole value in any letter case: "Cloud" and "cloud", "alice" and "Alice".
		{"category=Cloud", func(r full) bool { return strings.EqualFold(r.Category, "Cloud") }},
		{"owner=alice", func(r full) bool { return strings.EqualFold(r.Owner, "alice") }},
		{"owner=", func(r full) bool { return r.Owner == "" }},
		{"minScore=10", score(10, 25)},
		{"maxScore=6", score(1, 6)},
		{"minScore=4&maxScore=12", score(4, 12)},
		{"likelihood=2", factor(func(r full) *int { return r.Likelihood }, 2)},
		{"likelihood=2&impact=4", func(r full) bool { return is(r.Likelihood, 2) && is(r.Impact, 4) }},
		{"impact=1,5", factor(func(r full) *int { return r.Impact }, 1, 5)},
		{"residualLikelihood=2&residualImpact=2", func(r full) bool { return is(r.ResidualLikelihood, 2) && is(r.ResidualImpact, 2) }},
		{"reviewBefore=2026-02-11", func(r full) bool { return r.ReviewDate != nil && *r.ReviewDate < "2026-02-11" }},
		{"createdSince=" + url.QueryEscape(since.Format(time.RFC3339Nano)), func(r full) bool { return !r.CreatedAt.Before(since) }},
		{"createdUntil=" + url.QueryEscape(until.Format(time.RFC3339Nano)), func(r full) bool { return r.CreatedAt.Before(until) }},
		{"updatedSince=" + url.QueryEscape(updated.Format(time.RFC3339Nano)), func(r full) bool { return !r.UpdatedAt.Before(updated) }},
		{"q=VENDOR", func(r full) bool { return has("vendor", r) }},
		{"q=vendor+dpa", func(r full) bool { return has("vendor dpa", r) }},
		{"q=s3", func(r full) bool { return has("s3", r) }},
		{"q=ess+REV", func(r full) bool { return has("ess rev", r) }},
		{"q=nothing-like-this", func(full) bool { return false }},
		{"metadata%5Bteam%5D=ops", func(r full) bool { return r.Metadata["team"] == "ops" }},
		{"metadata%5Bteam%5D=ops&metadata%5Bn%5D=4", func(r full) bool { return r.Metadata["team"] == "ops" && r.Metadata["n"] == "4" }},
		{"status=open&minScore=3&q=vendor", func(r full) bool { return r.Status == "open" && score(3, 25)(r) && has("vendor", r) }},
	}
	for _, f := range filters {
		var want []full
		for _, r := range all {
			if f.keep(r) {
				want = append(want, r)
			}
		}
		if f.query != "" && !strings.Contains(f.query, "nothing") && (len(want) == 0 || len(want) == len(all)) {
			t.Errorf("%s selects %d of %d risks: the data does not test it", f.query, len(want), len(all))
		}
		for _, sort := range []string{"", "createdAt", "-createdAt", "updatedAt", "-updatedAt", "riskScore",
			"-riskScore", "title", "-title", "reviewDate", "-reviewDate", "residualScore", "-residualScore"} {
			if f.query != "" && sort != "" && sort != "riskScore" && sort != "-title" {
				continue // every filter under three orders, every order without a filter
			}
			query := strings.TrimPrefix(f.query+"&sort="+sort, "&")
			if sort == "" {
				query, sort = f.query, "-createdAt"
			}
			got := listAll(t, env, a.Key, query, 4)
			if !slices.Equal(idsOf(got), idsOf(ordered(want, sort))) {
				t.Errorf("%s: listed %v,\nwant %v", query, idsOf(got), idsOf(ordered(want, sort)))
			}
		}
	}
}

// TestListRefusesBadParameters: an unknown parameter, a bad value or a cursor from
// another query is 400 naming the parameter.
func TestListRefusesBadParameters(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	for range 3 {
		create(env, a.Key, map[string]any{"title": "t", "likelihood": 2, "impact": 2})
	}
	var p struct{ NextCursor *string }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks?limit=1&sort=title", Bearer: a.Key}).
		Expect(http.StatusOK).Decode(&p)
	other := url.QueryEscape(*p.NextCursor)
	for _, tt := range []struct{ query, param string }{
		{"foo=1", "foo"},
		{"status=bogus", "status"},
		{"status=open&status=closed", "status"},
		{"treatment=ignore", "treatment"},
		{"minScore=0", "minScore"},
		{"maxScore=abc", "maxScore"},
		{"minScore=20&maxScore=5", "minScore"},
		{"likelihood=0", "likelihood"},
		{"impact=2,6", "impact"},
		{"residualLikelihood=high", "residualLikelihood"},
		{"residualImpact=", "residualImpact"},
		{"reviewBefore=2026-13-01", "reviewBefore"},
		{"createdSince=yesterday", "createdSince"},
		{"createdUntil=2026-01-01", "createdUntil"},
		{"updatedSince=1", "updatedSince"},
		{"sort=score", "sort"},
		{"sort=--title", "sort"},
		{"metadata%5Bbad+key%5D=x", "metadata[bad key]"},
		{"limit=0", "limit"},
		{"cursor=garbage", "cursor"},
		{"sort=-title&cursor=" + other, "cursor"},
		{"sort=title&status=open&cursor=" + other, "cursor"},
		{"basis=inherent", "basis"},
	} {
		expectInvalid(t, env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks?" + tt.query, Bearer: a.Key}), tt.param)
	}
	// Every bad parameter is named at once, not only the first: the filters in name
	// order, then the route's own.
	for path, want := range map[string][]string{
		"/v2/risks?status=bogus&minScore=abc&foo=1&impact=9": {"foo", "impact", "minScore", "status"},
		"/v2/risks?limit=abc&minScore=abc":                   {"minScore", "limit"},
		"/v2/risks?sort=owner&limit=0":                       {"sort", "limit"},
		"/v2/risks/export?format=xml&status=x":               {"status", "format"},
		"/v2/risks/heatmap?basis=both&impact=9":              {"impact", "basis"},
	} {
		r := env.Do(apitest.Request{Method: http.MethodGet, Path: path, Bearer: a.Key})
		if named := namedFields(r); !slices.Equal(named, want) {
			t.Errorf("%s: errors name %v, want %v; body %s", path, named, want, r.Body.String())
		}
	}
	// The cursor still works with its own query.
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks?limit=1&sort=title&cursor=" + other, Bearer: a.Key}).
		Expect(http.StatusOK)
}

// TestSearchTakesAnyText: q's words are text, never syntax — LIKE wildcards,
// quotes and FTS5 operators match themselves.
func TestSearchTakesAnyText(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	odd := create(env, a.Key, map[string]any{"title": `50% off "quoted" *star* under_score`, "description": `a\b NEAR(x) OR`})
	create(env, a.Key, map[string]any{"title": "plain", "description": "nothing special here"})
	for q, want := range map[string]bool{
		`50%`: true, `"quoted"`: true, `*star*`: true, `under_`: true, `_`: true, `%`: true, `a\b`: true,
		`NEAR(x)`: true, `OR`: true, `"`: true, `0%`: true, `x%`: false, `5_%`: false, `"plain`: false, `*`: true,
	} {
		var p page
		env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks?q=" + url.QueryEscape(q), Bearer: a.Key}).
			Expect(http.StatusOK).Decode(&p)
		found := len(p.Data) == 1 && p.Data[0].ID == odd.ID
		if found != want || len(p.Data) > 1 {
			t.Errorf("q=%s listed %d risks (the odd one: %v), want it alone: %v", q, len(p.Data), found, want)
		}
	}
}
