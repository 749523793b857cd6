package architecture_test

import (
	"go/ast"
	"testing"
)

// maxLines is the longest a non-test function may be, counted from its func
// keyword to its closing brace: past that, a reader cannot hold it at once.
const maxLines = 80

// TestNoFunctionOver80Lines lists every non-test function of the module, commands
// included, that is longer than maxLines: a function declared, or a function
// literal outside any (a migration's, a table's).
func TestNoFunctionOver80Lines(t *testing.T) {
	t.Parallel()
	for _, f := range sources(t) {
		ast.Inspect(f.ast, func(n ast.Node) bool {
			var body *ast.BlockStmt
			name := "a function literal"
			switch x := n.(type) {
			case *ast.FuncDecl:
				body, name = x.Body, x.Name.Name
			case *ast.FuncLit:
				body = x.Body
			}
			if body == nil {
				return true
			}
			start := f.fset.Position(n.Pos())
			if lines := f.fset.Position(body.Rbrace).Line - start.Line + 1; lines > maxLines {
				t.Errorf("%s: %s is %d lines long, over %d: extract well-named pieces", start, name, lines, maxLines)
			}
			// A literal inside a declared function counts with it.
			_, decl := n.(*ast.FuncDecl)
			return !decl
		})
	}
}
