package architecture_test

import (
	"go/ast"
	"regexp"
	"strings"
	"testing"
)

// declared maps each package name of the module to the names its non-test files
// declare at top level, and "Type.Member" for the methods, struct fields and
// interface methods of its types.
func declared(t *testing.T) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	for _, f := range sources(t) {
		names := out[f.ast.Name.Name]
		if names == nil {
			names = map[string]bool{}
			out[f.ast.Name.Name] = names
		}
		for _, d := range f.ast.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names[d.Name.Name] = true
					continue
				}
				recv := d.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				if idx, ok := recv.(*ast.IndexExpr); ok {
					recv = idx.X
				}
				if id, ok := recv.(*ast.Ident); ok {
					names[id.Name+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					case *ast.TypeSpec:
						names[s.Name.Name] = true
						members(s, names)
					}
				}
			}
		}
	}
	return out
}

// members adds "Type.Member" for the fields of a struct type and the methods of
// an interface type.
func members(s *ast.TypeSpec, names map[string]bool) {
	var fields *ast.FieldList
	switch x := s.Type.(type) {
	case *ast.StructType:
		fields = x.Fields
	case *ast.InterfaceType:
		fields = x.Methods
	default:
		return
	}
	for _, f := range fields.List {
		for _, n := range f.Names {
			names[s.Name.Name+"."+n.Name] = true
		}
		if len(f.Names) == 0 { // embedded: its name is its type's
			if id, ok := f.Type.(*ast.Ident); ok {
				names[s.Name.Name+"."+id.Name] = true
			}
		}
	}
}

// TestArchitectureNamesWhatExists: every Go identifier docs/architecture.md names
// with its package (`pkg.Name`, `pkg.Type.Member`) is declared there, so the page
// cannot send a reader to code that was renamed or removed.
func TestArchitectureNamesWhatExists(t *testing.T) {
	t.Parallel()
	decls := declared(t)
	ident := regexp.MustCompile("`([a-z][a-z0-9]*)((?:\\.[A-Za-z_][A-Za-z0-9_]*)+)(?:\\(\\))?`")
	n := 0
	for _, m := range ident.FindAllStringSubmatch(readFile(t, "docs/architecture.md"), -1) {
		names, ok := decls[m[1]]
		if !ok || regexp.MustCompile(`\.(go|md|yaml|ts)$`).MatchString(m[2]) {
			continue // not a package of the module (an event type, a file name)
		}
		n++
		if name := strings.TrimPrefix(m[2], "."); !names[name] {
			t.Errorf("docs/architecture.md names %s.%s, which package %s does not declare", m[1], name, m[1])
		}
	}
	if n < 30 {
		t.Errorf("checked %d identifiers of docs/architecture.md; the pattern no longer finds them", n)
	}
}
