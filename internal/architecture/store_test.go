package architecture_test

import (
	"go/ast"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// rawClassify lists the store files that still call database.Classify, and why:
// each reads or writes past GORM's callbacks, which classify every other statement
// (internal/database/classify.go).
var rawClassify = map[string]string{
	"internal/requestlog/requestlogstore/store.go": "the batch goes by COPY or a prepared statement on database/sql",
	"internal/events/eventstore/claims.go":         "UPDATE … RETURNING read through Raw().Scan, and the write gate's wait",
	"internal/migrations/migrations.go":            "gormigrate begins and commits its own transactions",
	"internal/idempotency/gormstore/postgres.go":   "the reservation's pipeline on the pgx connection",
	"internal/idempotency/gormstore/sqlite.go":     "BEGIN, and the write gate's wait",
	"internal/idempotency/gormstore/store.go":      "Lookup's one SELECT on database/sql",
	"internal/idempotency/gormstore/peek.go":       "pg_locks read through Raw().Scan",
	"internal/tenants/tenantstore/store.go":        "the API-key lookup on database/sql",
}

// TestStoresDoNotClassifyByHand: store failures are classified at one boundary,
// GORM's callbacks (docs/architecture.md); only the raw paths listed above, which
// those callbacks cannot see, call database.Classify themselves.
func TestStoresDoNotClassifyByHand(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, f := range sources(t) {
		if inDir(f, "internal/database") {
			continue
		}
		calls(f, "database", "Classify", func(pos token.Position, _ *ast.CallExpr) {
			seen[f.path] = true
			if _, ok := rawClassify[f.path]; !ok {
				t.Errorf("%s: database.Classify by hand; GORM statements are classified by the callbacks", pos)
			}
		})
	}
	for path := range rawClassify {
		if !seen[path] {
			t.Errorf("%s no longer calls database.Classify: drop it from rawClassify", path)
		}
	}
}

// TestOneKeysetPager: every list reads its page through database.Page; no other
// package orders by id and reads one row more than its limit.
func TestOneKeysetPager(t *testing.T) {
	t.Parallel()
	for _, f := range sources(t) {
		if inDir(f, "internal/database") {
			continue
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Limit" {
				return true
			}
			if b, ok := call.Args[0].(*ast.BinaryExpr); ok && b.Op == token.ADD {
				t.Errorf("%s: a page read by hand (Limit(n + …)); use database.Page", f.fset.Position(call.Pos()))
			}
			return true
		})
	}
}

// TestTenantScopeInOnePlace: a store scopes a statement to a tenant with
// database.OfTenant, through its one tenant method, never with a Where of its own.
func TestTenantScopeInOnePlace(t *testing.T) {
	t.Parallel()
	for _, f := range sources(t) {
		if inDir(f, "internal/database") {
			continue
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Where" {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, _ := strconv.Unquote(lit.Value); strings.Contains(s, "tenant_id =") {
				t.Errorf("%s: tenant scoped by hand (%q); use the store's tenant method (database.OfTenant)", f.fset.Position(call.Pos()), s)
			}
			return true
		})
	}
}
