package database

import (
	"context"

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
	ctx := q.Statement.Context
	if ctx == nil {
		ctx = context.Background()
	}
	q = q.WithContext(MayLag(ctx))
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
