package architecture_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// root is the module's root, two folders up from this package.
const root = "../.."

// goFile is one parsed non-test Go file of the module.
type goFile struct {
	path string // slash-separated, relative to the module root
	fset *token.FileSet
	ast  *ast.File
}

var (
	parseOnce sync.Once
	parsed    []goFile
	parseErr  error
)

// sources parses every non-test Go file of the module (node_modules, testdata
// and nested modules such as bench/peer, which have a go.mod of their own and
// cannot import riskapi's packages, left out), once per test binary.
func sources(t *testing.T) []goFile {
	t.Helper()
	parseOnce.Do(func() {
		parseErr = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if n := d.Name(); n == "node_modules" || n == "testdata" || strings.HasPrefix(n, ".") && p != root {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && p != root {
					return filepath.SkipDir // another module
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			parsed = append(parsed, goFile{path: filepath.ToSlash(rel), fset: fset, ast: f})
			return nil
		})
	})
	if parseErr != nil {
		t.Fatal(parseErr)
	}
	return parsed
}

// readFile returns the text of a file given relative to the module root.
func readFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// calls reports each call in f to pkg.name (a package-qualified function), with
// its position.
func calls(f goFile, pkg, name string, each func(pos token.Position, call *ast.CallExpr)) {
	ast.Inspect(f.ast, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == name {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == pkg {
				each(f.fset.Position(call.Pos()), call)
			}
		}
		return true
	})
}

// methodCalls reports each call in f of a method or function named name whose
// first argument is there, with its position.
func methodCalls(f goFile, name string, each func(pos token.Position, first ast.Expr)) {
	ast.Inspect(f.ast, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == name {
			each(f.fset.Position(call.Pos()), call.Args[0])
		}
		return true
	})
}

// inDir reports whether the file lies in the package folder dir.
func inDir(f goFile, dir string) bool { return filepath.ToSlash(filepath.Dir(f.path)) == dir }
