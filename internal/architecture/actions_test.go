package architecture_test

import (
	"go/ast"
	"testing"
)

// TestActionsAreDeclaredInTheRegistryOnly: an action is declared once, with its row
// of changes.Registry (internal/changes/actions.go), from which the audit log's
// filter and the event types are derived. A constant or conversion of type
// changes.Action anywhere else would be an action nothing lists (and which
// changes.Point refuses at its first write).
func TestActionsAreDeclaredInTheRegistryOnly(t *testing.T) {
	t.Parallel()
	isAction := func(e ast.Expr) bool {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Action" {
			return false
		}
		id, ok := sel.X.(*ast.Ident)
		return ok && id.Name == "changes"
	}
	for _, f := range sources(t) {
		if inDir(f, "internal/changes") {
			continue
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				if n.Type != nil && isAction(n.Type) && len(n.Values) > 0 {
					t.Errorf("%s: declares a changes.Action; declare it in internal/changes/actions.go, with its Registry row", f.fset.Position(n.Pos()))
				}
			case *ast.CallExpr:
				if isAction(n.Fun) {
					t.Errorf("%s: makes a changes.Action; use one of internal/changes/actions.go", f.fset.Position(n.Pos()))
				}
			}
			return true
		})
	}
}
