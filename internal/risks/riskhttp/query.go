package riskhttp

import (
	"github.com/labstack/echo/v4"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
)

// filterParams are the query parameters every register read takes
// (docs/register.md); metadata[KEY] too.
var filterParams = []string{"status", "treatment", "category", "owner", "ownerId", "minScore", "maxScore",
	"likelihood", "impact", "residualLikelihood", "residualImpact",
	"reviewBefore", "createdSince", "createdUntil", "updatedSince", "outsideAppetite", "q"}

// Bounds of q: more words or longer ones are refused rather than searched slowly.
const (
	maxWords   = 10
	maxWordLen = 100
)

// queryOf reads the filters (and sort, when "sort" is among extra) of params; extra
// names the route's other parameters. Errors: 400 VALIDATION_FAILED naming every
// unknown, repeated or bad parameter (in name order), so that a caller fixes them
// in one go.
func queryOf(params url.Values, extra ...string) (risks.Query, error) {
	q := risks.Query{Sort: risks.DefaultSort}
	var bad []error
	for _, name := range slices.Sorted(maps.Keys(params)) {
		err := known(name, params[name], extra)
		if err == nil {
			err = setParam(&q, name, params.Get(name))
		}
		bad = append(bad, err)
	}
	// An empty range is a mistake, not a query: say so rather than list nothing.
	if q.MinScore != nil && q.MaxScore != nil && *q.MinScore > *q.MaxScore {
		bad = append(bad, problem.Invalid("minScore", "must not be greater than maxScore"))
	}
	return q, problem.Join(bad...)
}

// known refuses a parameter the route does not take, or one given twice.
func known(name string, values []string, extra []string) error {
	_, isMetadata := metadataKey(name)
	if !isMetadata && !slices.Contains(filterParams, name) && !slices.Contains(extra, name) {
		return problem.Invalid(name, "is not a parameter of this route")
	}
	if len(values) > 1 {
		return problem.Invalid(name, "is given more than once (a list is comma-separated)")
	}
	return nil
}

// metadataKey returns KEY of a parameter named metadata[KEY].
func metadataKey(name string) (string, bool) {
	k, ok := strings.CutPrefix(name, "metadata[")
	if !ok || !strings.HasSuffix(k, "]") {
		return "", false
	}
	return strings.TrimSuffix(k, "]"), true
}

// setParam reads one parameter into q.
func setParam(q *risks.Query, name, v string) error {
	bad := func(detail string) error { return problem.Invalid(name, detail) }
	var err error
	switch name {
	case "status":
		q.Statuses, err = list(v, risks.Statuses, name)
	case "treatment":
		q.Treatments, err = list(v, risks.Treatments, name)
	case "category":
		q.Category = &v
	case "owner":
		q.Owner = &v
	case "ownerId":
		q.OwnerUserID = &v
	case "minScore", "maxScore":
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 1 || n > 25 {
			return bad("must be an integer from 1 to 25")
		}
		if name == "minScore" {
			q.MinScore = &n
		} else {
			q.MaxScore = &n
		}
	case "likelihood", "impact", "residualLikelihood", "residualImpact":
		n, err := factors(v, name)
		if err != nil {
			return err
		}
		*map[string]*[]int{"likelihood": &q.Likelihoods, "impact": &q.Impacts,
			"residualLikelihood": &q.ResidualLikelihoods, "residualImpact": &q.ResidualImpacts}[name] = n
	case "reviewBefore":
		if d := risks.DateDetail(v, false); d != "" {
			return bad(d)
		}
		q.ReviewBefore = &v
	case "createdSince", "createdUntil", "updatedSince":
		t, perr := time.Parse(time.RFC3339Nano, v)
		if perr != nil {
			return bad("must be an RFC 3339 time, e.g. 2026-01-02T15:04:05Z")
		}
		t = t.UTC()
		*map[string]**time.Time{"createdSince": &q.CreatedSince, "createdUntil": &q.CreatedUntil,
			"updatedSince": &q.UpdatedSince}[name] = &t
	case "outsideAppetite":
		b, perr := strconv.ParseBool(v)
		if perr != nil || (v != "true" && v != "false") {
			return bad("must be true or false")
		}
		q.OutsideAppetite = &b
	case "q":
		return setWords(q, v)
	case "sort":
		return setSort(q, v)
	default:
		if k, ok := metadataKey(name); ok {
			if !risks.ValidMetadataKey(k) {
				return bad("KEY must be 1–40 characters of A-Z a-z 0-9 _ . -")
			}
			if q.Metadata == nil {
				q.Metadata = map[string]string{}
			}
			q.Metadata[k] = v
		}
	}
	return err
}

// costlyList is the list's route.Costly: a page no index answers
// (risks.Query.Costly). A query it cannot read is not costly: the handler refuses it.
func costlyList(c echo.Context) bool {
	q, err := queryOf(c.QueryParams(), "limit", "cursor", "sort")
	return err == nil && q.Costly()
}

// costlyHeatmap is the heat map's route.Costly: one the counts do not answer
// (risks.Query.Counted) counts the selected risks one by one, and movedSince reads
// the audit log's entries since its date.
func costlyHeatmap(c echo.Context) bool {
	q, err := queryOf(c.QueryParams(), "basis", "movedSince")
	return err == nil && (!q.Counted() || c.QueryParams().Has("movedSince"))
}

// list reads a comma-separated list of allowed values.
func list[T ~string](v string, allowed []T, name string) ([]T, error) {
	var out []T
	for _, s := range strings.Split(v, ",") {
		t := T(strings.TrimSpace(s))
		if !slices.Contains(allowed, t) {
			names := make([]string, len(allowed))
			for i, a := range allowed {
				names[i] = string(a)
			}
			return nil, problem.Invalid(name, "must be one or more of "+strings.Join(names, ", ")+", comma-separated")
		}
		out = append(out, t)
	}
	return out, nil
}

// factors reads a comma-separated list of factor values, 1–5.
func factors(v, name string) ([]int, error) {
	var out []int
	for _, s := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 5 {
			return nil, problem.Invalid(name, "must be one or more integers from 1 to 5, comma-separated")
		}
		out = append(out, n)
	}
	return out, nil
}

func setWords(q *risks.Query, v string) error {
	q.Words = strings.Fields(v)
	if len(q.Words) > maxWords {
		return problem.Invalid("q", "must have at most "+strconv.Itoa(maxWords)+" words")
	}
	for _, w := range q.Words {
		if len(w) > maxWordLen {
			return problem.Invalid("q", "words must be at most "+strconv.Itoa(maxWordLen)+" bytes")
		}
	}
	return nil
}

func setSort(q *risks.Query, v string) error {
	field, desc := strings.CutPrefix(v, "-")
	if !slices.Contains(risks.SortFields, risks.SortField(field)) {
		return problem.Invalid("sort", "must be one of createdAt, updatedAt, riskScore, title, reviewDate, residualScore, with - in front for descending")
	}
	q.Sort = risks.Sort{Field: risks.SortField(field), Desc: desc}
	return nil
}
