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
	"internal/migrations/migrations.go":            "the migrations' transaction, begun and committed by GORM or gormigrate",
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

// storeRules are what database does for every store, each with the call that
// would be a store doing it by hand: a page read past database.Page (one row more
// than the limit), a tenant scoped past the store's tenant method
// (database.OfTenant).
var storeRules = []struct {
	method string
	byHand func(first ast.Expr) string
}{
	{"Limit", func(n ast.Expr) string {
		if b, ok := n.(*ast.BinaryExpr); ok && b.Op == token.ADD {
			return "a page read by hand (Limit(n + …)); use database.Page"
		}
		return ""
	}},
	{"Where", func(n ast.Expr) string {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return ""
		}
		if s, _ := strconv.Unquote(lit.Value); strings.Contains(s, "tenant_id =") {
			return "tenant scoped by hand (" + s + "); use the store's tenant method (database.OfTenant)"
		}
		return ""
	}},
}

// TestOnePagerAndOneTenantScope: every list reads its page through database.Page,
// and every store scopes to a tenant through database.OfTenant, applied by its one
// tenant method; no package but database does either by hand.
func TestOnePagerAndOneTenantScope(t *testing.T) {
	t.Parallel()
	for _, f := range sources(t) {
		if inDir(f, "internal/database") {
			continue
		}
		for _, r := range storeRules {
			methodCalls(f, r.method, func(pos token.Position, n ast.Expr) {
				if why := r.byHand(n); why != "" {
					t.Errorf("%s: %s", pos, why)
				}
			})
		}
	}
}
