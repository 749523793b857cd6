package route

import (
	"encoding/base64"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/problem"
)

// Page sizes of every list route (docs/openapi.yaml, parameters limit and cursor).
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// Paging is a list request's ?limit and ?cursor.
type Paging struct {
	// Limit is the page size, DefaultLimit when not given, 1 to MaxLimit.
	Limit int
	// After is the ID the cursor names (the last item of the previous page), "" for
	// the first page. Whether the list continues before or after it is the list's.
	After string
}

// PagingOf parses ?limit and ?cursor; a cursor is one this API returned for items
// whose IDs have prefix (ids.Risk, …). Errors: 400 VALIDATION_FAILED naming limit or
// cursor.
func PagingOf(c echo.Context, prefix string) (Paging, error) {
	n, err := LimitOf(c)
	p := Paging{Limit: n}
	if err != nil {
		return p, err
	}
	if s := c.QueryParam("cursor"); s != "" {
		raw, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil || !ids.Valid(prefix, string(raw)) {
			return p, problem.Invalid("cursor", "is not a cursor this API returned")
		}
		p.After = string(raw)
	}
	return p, nil
}

// LimitOf parses ?limit: DefaultLimit when not given, else 1 to MaxLimit. Errors:
// 400 VALIDATION_FAILED naming limit. A list whose cursor is more than an ID (a
// sorted list's) reads the cursor itself.
func LimitOf(c echo.Context) (int, error) {
	s := c.QueryParam("limit")
	if s == "" {
		return DefaultLimit, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxLimit {
		return DefaultLimit, problem.Invalid("limit", "must be an integer from 1 to "+strconv.Itoa(MaxLimit))
	}
	return n, nil
}

// Page is the envelope of every list response (docs/openapi.yaml): the items, whether
// more follow, and the cursor of the next page (null on the last).
type Page[T any] struct {
	Data       []T     `json:"data"`
	HasMore    bool    `json:"hasMore"`
	NextCursor *string `json:"nextCursor"`
}

// NewPage shows items with show; when more follow, the next cursor names the last
// item's ID (id). Data is [] rather than null when there are no items.
func NewPage[S, T any](items []S, more bool, id func(S) string, show func(S) T) Page[T] {
	p := Page[T]{Data: make([]T, len(items)), HasMore: more}
	for i, it := range items {
		p.Data[i] = show(it)
	}
	if more && len(items) > 0 {
		next := base64.RawURLEncoding.EncodeToString([]byte(id(items[len(items)-1])))
		p.NextCursor = &next
	}
	return p
}
