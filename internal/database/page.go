package database

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// Order is the direction of a keyset page over a table's id column. Every id riskapi
// lists by grows with time (UUIDv7, or a serial), so id order is creation order and
// stable under concurrent inserts.
type Order bool

// The two directions a list reads in.
const (
	// NewestFirst reads ids in descending order: a page holds the ids below its cursor.
	NewestFirst Order = false
	// OldestFirst reads ids in ascending order: a page holds the ids above its cursor.
	OldestFirst Order = true
)

// Page reads one keyset page of q as rows of R and returns them converted by conv:
// at most limit rows in order past cursor (the last id of the previous page; K's
// zero value for the first page), and whether more rows follow, which it learns by
// reading one row more than limit. q carries the list's filters (tenant, type…);
// Page adds the cursor, the order and the limit. A list may lag: with
// DATABASE_READ_URL, Page reads from the replica unless the request writes or the
// read is in a transaction (MayLag, replica.go). Errors: the store's, classified
// (registerClassify).
func Page[R, T any, K comparable](q *gorm.DB, order Order, cursor K, limit int, conv func(*R) T) ([]T, bool, error) {
	q = mayLag(q)
	var zero K
	dir, cmp := "id DESC", "id < ?"
	if order == OldestFirst {
		dir, cmp = "id", "id > ?"
	}
	if cursor != zero {
		q = q.Where(cmp, cursor)
	}
	var rows []R
	if err := q.Order(dir).Limit(limit + 1).Find(&rows).Error; err != nil {
		return nil, false, err
	}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	out := make([]T, len(rows))
	for i := range rows {
		out[i] = conv(&rows[i])
	}
	return out, more, nil
}

// Sorted is the order of a keyset page over a sort key other than id: Column (a
// trusted SQL expression, never client text), descending when Desc, ties broken by
// id in the same direction. When Nullable, rows whose key is NULL come last in both
// directions, as the same rows on every store.
type Sorted struct {
	Column   string
	Desc     bool
	Nullable bool
}

// mayLag marks q's read as one the replica may serve (MayLag, replica.go).
func mayLag(q *gorm.DB) *gorm.DB {
	ctx := q.Statement.Context
	if ctx == nil {
		ctx = context.Background()
	}
	return q.WithContext(MayLag(ctx))
}

// After is the cursor of a sorted page: the sort key and id of the previous page's
// last row; Key is nil when that row's key is NULL.
type After struct {
	Key any
	ID  string
}

// PageSorted is Page under s: at most limit rows of q past after (nil for the first
// page) in s's order, converted by conv, and whether more follow. The cursor holds
// the sort key and the id, so paging visits every row once whatever the key's
// duplicates, while nothing changes. Errors: the store's, classified.
func PageSorted[R, T any](q *gorm.DB, s Sorted, after *After, limit int, conv func(*R) T) ([]T, bool, error) {
	q = mayLag(q) // like Page: a list may read the replica
	if after != nil {
		cond, args := s.past(*after)
		q = q.Where(cond, args...)
	}
	var rows []R
	if err := q.Order(s.order()).Limit(limit + 1).Find(&rows).Error; err != nil {
		return nil, false, err
	}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	out := make([]T, len(rows))
	for i := range rows {
		out[i] = conv(&rows[i])
	}
	return out, more, nil
}

// order is s's ORDER BY: the key, then the id, NULL keys last.
func (s Sorted) order() string {
	dir, nulls := "ASC", ""
	if s.Desc {
		dir = "DESC"
	}
	if s.Nullable {
		nulls = " NULLS LAST"
	}
	return fmt.Sprintf("%s %s%s, id %s", s.Column, dir, nulls, dir)
}

// past is the condition of the rows after `after` in s's order: the keyset
// PageSorted pages by.
func (s Sorted) past(after After) (string, []any) {
	cmp := ">"
	if s.Desc {
		cmp = "<"
	}
	switch {
	case !s.Nullable:
		return fmt.Sprintf("(%s, id) %s (?, ?)", s.Column, cmp), []any{after.Key, after.ID}
	case after.Key == nil:
		return fmt.Sprintf("(%s IS NULL AND id %s ?)", s.Column, cmp), []any{after.ID}
	default:
		return fmt.Sprintf("(%[1]s %[2]s ? OR (%[1]s = ? AND id %[2]s ?) OR %[1]s IS NULL)", s.Column, cmp),
			[]any{after.Key, after.Key, after.ID}
	}
}

// Through is the condition of the rows up to and including end in s's order, for
// an end whose Key is not nil, written as a range of the key (then the id) that a
// walk of the sort's index stops at. Rows with a NULL key, which come last, are
// never through such an end.
func (s Sorted) Through(end After) (string, []any) {
	cmp, strict := "<=", "<"
	if s.Desc {
		cmp, strict = ">=", ">"
	}
	return fmt.Sprintf("(%[1]s %[2]s ? AND (%[1]s %[3]s ? OR id %[2]s ?))", s.Column, cmp, strict),
		[]any{end.Key, end.Key, end.ID}
}

// NthSorted returns the n-th row (from 1) of q past after (nil: from the start) in
// s's order, or nil when fewer rows follow: the end of a window of n rows that a
// read may then walk (Through). Errors: the store's, classified.
func NthSorted[R any](q *gorm.DB, s Sorted, after *After, n int) (*R, error) {
	q = mayLag(q)
	if after != nil {
		cond, args := s.past(*after)
		q = q.Where(cond, args...)
	}
	var rows []R
	if err := q.Order(s.order()).Offset(n - 1).Limit(1).Find(&rows).Error; err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return &rows[0], nil
}
