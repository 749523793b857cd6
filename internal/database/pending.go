package database

import (
	"context"
	"sync"
	"sync/atomic"

	"gorm.io/gorm"
)

// An import written in short transactions (SQLite; docs/register.md "Import")
// marks the rows it writes with its ID (import_id, migration 0031) and is pending
// until its keyed request's transaction deletes its row of pending_imports. A
// marked row whose import is pending is read by no one. The filter that hides
// them is added only to the reads of a tenant this process knows to have a
// pending import (or one not yet taken back), and to the cross-tenant readers
// (the delivery claimer, the due finder) only while there is any: everybody
// else's statements keep their plans. SQLite is one process per file, so the
// process's own note is exact; the statement's NOT IN over pending_imports
// decides row by row, so a publish is seen the moment it commits.
var pending = struct {
	mu       sync.Mutex
	byTenant map[string]int
	n        atomic.Int64
}{byTenant: map[string]int{}}

// NoteImportPending notes that tenantID has a pending import until the returned
// function is called (once, after the import's pending row is gone: published or
// taken back). Call it before the import's first row is committed.
func NoteImportPending(tenantID string) (done func()) {
	pending.mu.Lock()
	pending.byTenant[tenantID]++
	pending.n.Add(1)
	pending.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			pending.mu.Lock()
			if pending.byTenant[tenantID]--; pending.byTenant[tenantID] <= 0 {
				delete(pending.byTenant, tenantID)
			}
			pending.n.Add(-1)
			pending.mu.Unlock()
		})
	}
}

// ImportPending reports whether tenantID may have a pending import's rows: its
// reads then filter them (Published).
func ImportPending(tenantID string) bool {
	if pending.n.Load() == 0 {
		return false
	}
	pending.mu.Lock()
	defer pending.mu.Unlock()
	return pending.byTenant[tenantID] > 0
}

// AnyImportPending reports whether any tenant may have a pending import's rows:
// a reader across tenants then filters them (PublishedSQL).
func AnyImportPending() bool { return pending.n.Load() > 0 }

// PublishedSQL is the condition that keeps the rows of column's table that no
// pending import marks; column is the table's import_id, qualified as the
// statement needs.
func PublishedSQL(column string) string {
	return "(" + column + " IS NULL OR " + column + " NOT IN (SELECT id FROM pending_imports))"
}

// Published is the GORM scope that hides the pending imports' rows from the
// reads of tenantID, when it may have one (ImportPending); otherwise it adds
// nothing. column is the table's import_id, qualified as the statement needs.
func Published(tenantID, column string) func(*gorm.DB) *gorm.DB {
	return func(q *gorm.DB) *gorm.DB {
		if !ImportPending(tenantID) {
			return q
		}
		return q.Where(PublishedSQL(column))
	}
}

type importKey struct{}

// WithImport returns ctx marking the rows InsertRows writes into a table of
// MarkedTables with the import importID.
func WithImport(ctx context.Context, importID string) context.Context {
	return context.WithValue(ctx, importKey{}, importID)
}

// ImportOf is the import ctx marks its rows with, "" for none.
func ImportOf(ctx context.Context) string {
	id, _ := ctx.Value(importKey{}).(string)
	return id
}

// MarkedTables are the tables whose rows InsertRows marks with ctx's import
// (WithImport). An import's webhook deliveries take their event's mark.
var MarkedTables = map[string]bool{"risks": true, "events": true, "audit_log": true}
