package architecture_test

import (
	"go/ast"
	"go/token"
	"regexp"
	"strings"
	"testing"
)

// notA404 are the not-found sentinels that never reach a client as 404.
var notA404 = map[string]string{
	"auth.ErrSessionNotFound": "an unknown session is 401 UNAUTHENTICATED",
	"auth.ErrSettingNotFound": "a setting is the server's own state, read at start-up",
}

// TestOneNotFoundTable: a 404 is mapped in one table, internal/server/notfound.go
// (docs/architecture.md): no package but server and problem names
// problem.NotFound or http.StatusNotFound, and every not-found sentinel a domain
// declares (Err…NotFound) has its row there, or is listed in notA404.
func TestOneNotFoundTable(t *testing.T) {
	t.Parallel()
	table := readFile(t, "internal/server/notfound.go")
	for _, f := range sources(t) {
		if !strings.HasPrefix(f.path, "internal/") {
			continue
		}
		mapper := inDir(f, "internal/server") || inDir(f, "internal/problem")
		ast.Inspect(f.ast, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				id, ok := x.X.(*ast.Ident)
				if !mapper && ok && (id.Name == "problem" && x.Sel.Name == "NotFound" || id.Name == "http" && x.Sel.Name == "StatusNotFound") {
					t.Errorf("%s: a 404 mapped outside internal/server/notfound.go; return the domain's not-found sentinel", f.fset.Position(x.Pos()))
				}
			case *ast.ValueSpec:
				for _, name := range x.Names {
					q := f.ast.Name.Name + "." + name.Name
					if _, ok := notA404[q]; ok || !name.IsExported() || !strings.HasPrefix(name.Name, "Err") || !strings.HasSuffix(name.Name, "NotFound") {
						continue
					}
					if !strings.Contains(table, "{"+q+",") {
						t.Errorf("%s: %s has no row in internal/server/notfound.go", f.fset.Position(name.Pos()), q)
					}
				}
			}
			return true
		})
	}
}

// componentDefaults are the Default… identifiers declared outside internal/config,
// each the default of a component's own knob rather than of a configuration
// variable (those are stated only in internal/config/settings.go).
var componentDefaults = map[string]string{
	"route.DefaultLimit":              "the API's page size, part of the contract (docs/openapi.yaml)",
	"sweep.DefaultBatchSize":          "a sweep's batch when its store's pacing names none (internal/app names them)",
	"webhookhttp.DefaultMaxBodyBytes": "the inbound webhook body limit of the handler",
	"idempotency.DefaultMaxBodyBytes": "the fingerprint's JSON body limit",
	"upload.DefaultConfig":            "the spool's limits on form fields and parts",
	"risks.DefaultSort":               "the risk list's order without sort=, part of the contract (-createdAt, docs/register.md)",
}

// TestNoOtherPackageStatesAConfigDefault: a configuration variable's default is
// stated once, in its row of internal/config/settings.go (docs/architecture.md).
// Outside internal/config (and the commands and SDKs, which are clients) no
// constant or variable that is a default (named Default…, or said to be one) names
// a configuration variable, and every Default… identifier is a component's own
// knob, listed above with its reason.
func TestNoOtherPackageStatesAConfigDefault(t *testing.T) {
	t.Parallel()
	var vars []string
	for _, m := range regexp.MustCompile(`\{"([A-Z][A-Z_]+)", "[a-z-]+", "`).FindAllStringSubmatch(readFile(t, "internal/config/settings.go"), -1) {
		vars = append(vars, m[1])
	}
	if len(vars) < 10 {
		t.Fatalf("read %d settings from internal/config/settings.go; the pattern no longer matches its rows", len(vars))
	}
	seen := map[string]bool{}
	for _, f := range sources(t) {
		if inDir(f, "internal/config") || !strings.HasPrefix(f.path, "internal/") {
			continue
		}
		for _, d := range f.ast.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST && g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				v := spec.(*ast.ValueSpec)
				doc := g.Doc.Text() + v.Doc.Text() + v.Comment.Text()
				for _, name := range v.Names {
					isDefault := strings.HasPrefix(name.Name, "Default") || strings.Contains(strings.ToLower(doc), "default")
					for _, env := range vars {
						if isDefault && regexp.MustCompile(`\b`+env+`\b`).MatchString(doc) {
							t.Errorf("%s: %s restates the default of %s; read it from config", f.fset.Position(name.Pos()), name.Name, env)
						}
					}
					if q := f.ast.Name.Name + "." + name.Name; strings.HasPrefix(name.Name, "Default") {
						seen[q] = true
						if _, ok := componentDefaults[q]; !ok {
							t.Errorf("%s: %s states a default outside internal/config; a configuration variable's belongs in settings.go, a component's own knob in componentDefaults with its reason", f.fset.Position(name.Pos()), q)
						}
					}
				}
			}
		}
	}
	for q := range componentDefaults {
		if !seen[q] {
			t.Errorf("%s is gone: drop it from componentDefaults", q)
		}
	}
}

// homes lists rules docs/architecture.md gives one home, each by the identifier
// only that home may use: a qualified name (pkg.Name) or a method (.Name).
var homes = []struct {
	ident string
	dirs  []string
	claim string
}{
	{"problem.IdempotencyKeyReused", []string{"internal/idempotency"}, "422 IDEMPOTENCY_KEY_REUSED is decided by the engine alone"},
	{"problem.IdempotencyRequestInProgress", []string{"internal/idempotency", "internal/mcpserver"}, "409 IDEMPOTENCY_REQUEST_IN_PROGRESS is decided by the engine alone (the MCP envelope only renames it IDEMPOTENCY_KEY_IN_USE)"},
	{"problem.NotExecuted", []string{"internal/server", "internal/idempotency"}, "nothing but the error renderer and the engine promises not_executed"},
	{".Begin", []string{"internal/database", "internal/idempotency", "internal/idempotency/gormstore"}, "transactions begin in database.RunInTx or a keyed write's reservation (Reservation.Begin)"},
	{"database.WithCallTimeout", []string{"internal/server"}, "the store call deadline is set once, in server/chain.go"},
	{"idempotency.HeaderIdempotencyKey", []string{"internal/idempotency"}, "Idempotency-Key is read once, by the engine's parseKey; code outside the engine asks idempotency.KeyOf"},
	{"slog.Duration", []string{"internal/logfield"}, "a logged duration is milliseconds under a key that says so (logfield.Duration, logfield.Millis), never slog's bare nanoseconds"},
}

// TestRulesStayHome: each identifier of homes is used only in its home.
func TestRulesStayHome(t *testing.T) {
	t.Parallel()
	for _, f := range sources(t) {
		ast.Inspect(f.ast, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			name := "." + sel.Sel.Name
			if id, ok := sel.X.(*ast.Ident); ok {
				if q := id.Name + name; slicesContainsIdent(q) {
					name = q
				}
			}
			for _, h := range homes {
				if h.ident != name {
					continue
				}
				home := false
				for _, d := range h.dirs {
					home = home || inDir(f, d)
				}
				if !home {
					t.Errorf("%s: %s outside %v: %s", f.fset.Position(sel.Pos()), h.ident, h.dirs, h.claim)
				}
			}
			return true
		})
	}
}

// slicesContainsIdent reports whether q is a qualified name homes lists.
func slicesContainsIdent(q string) bool {
	for _, h := range homes {
		if h.ident == q {
			return true
		}
	}
	return false
}

// TestEachConditionalHeaderReadOnce: If-Match and If-None-Match are each parsed in
// one place (etag.FromHeader, riskhttp's conditional.go), so that a write's
// precondition and the 412 that refuses it cannot read the header differently.
func TestEachConditionalHeaderReadOnce(t *testing.T) {
	t.Parallel()
	seen := map[string][]token.Position{}
	for _, f := range sources(t) {
		calls(f, "etag", "FromHeader", func(pos token.Position, call *ast.CallExpr) {
			name := "a header named by a variable"
			if len(call.Args) == 2 {
				if lit, ok := call.Args[1].(*ast.BasicLit); ok {
					name = lit.Value
				}
			}
			seen[name] = append(seen[name], pos)
		})
	}
	for name, at := range seen {
		if len(at) > 1 {
			t.Errorf("%s is parsed %d times, at %v: parse it once and pass the result on", name, len(at), at)
		}
	}
}
