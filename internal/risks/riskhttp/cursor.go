package riskhttp

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
)

// cursor is what a list's nextCursor holds (base64url of its JSON): the last risk's
// sort key and ID, and a digest of the query it belongs to, so a cursor given to
// another query is refused rather than silently skipping or repeating risks.
type cursor struct {
	Key   any    `json:"k"`
	ID    string `json:"i"`
	Query string `json:"q"`
}

// queryDigest identifies a list's query: every parameter but limit and cursor.
func queryDigest(params url.Values) string {
	var b strings.Builder
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range params {
			if k != "limit" && k != "cursor" && !yield(k) {
				return
			}
		}
	}) {
		b.WriteString(url.QueryEscape(name) + "=" + url.QueryEscape(params.Get(name)) + "&")
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:8])
}

// cursorAfter returns the JSON of the cursor after r in s's order (route.NewPage
// base64-encodes it).
func cursorAfter(s risks.Sort, digest string) func(r *risks.Risk) string {
	return func(r *risks.Risk) string {
		key := s.Key(r)
		if t, ok := key.(time.Time); ok {
			key = t.UTC().Format(time.RFC3339Nano)
		}
		b, _ := json.Marshal(cursor{Key: key, ID: r.ID, Query: digest}) // strings and numbers only
		return string(b)
	}
}

// markOf reads ?cursor for the query q with digest. Errors: 400 VALIDATION_FAILED
// naming cursor when it is not one this API returned for the same query.
func markOf(raw string, q risks.Query, digest string) (*risks.Mark, error) {
	if raw == "" {
		return nil, nil
	}
	bad := problem.Invalid("cursor", "is not a cursor this API returned for this query (same filters and sort)")
	b, err := base64.RawURLEncoding.DecodeString(raw)
	var c cursor
	if err != nil || json.Unmarshal(b, &c) != nil || c.Query != digest || !ids.Valid(ids.Risk, c.ID) {
		return nil, bad
	}
	m := &risks.Mark{ID: c.ID}
	switch k := c.Key.(type) {
	case nil:
		if q.Sort.Field != risks.SortRiskScore && q.Sort.Field != risks.SortReviewDate && q.Sort.Field != risks.SortResidualScore {
			return nil, bad
		}
	case float64:
		if (q.Sort.Field != risks.SortRiskScore && q.Sort.Field != risks.SortResidualScore) || k != float64(int(k)) {
			return nil, bad
		}
		m.Key = int(k)
	case string:
		switch q.Sort.Field {
		case risks.SortCreatedAt, risks.SortUpdatedAt:
			t, err := time.Parse(time.RFC3339Nano, k)
			if err != nil {
				return nil, bad
			}
			m.Key = t.UTC()
		case risks.SortTitle, risks.SortReviewDate:
			m.Key = k
		default:
			return nil, bad
		}
	default:
		return nil, bad
	}
	return m, nil
}
