package architecture_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSDKModuleRequiresOnlyWhatItShips: every module sdk/go.mod requires is
// imported by the SDK's own (non-test) code, so an application that uses the SDK
// pulls nothing its tests alone need (docs/sdk.md: only google/uuid and the
// Standard Webhooks library). A test-only helper belongs in the standard library.
func TestSDKModuleRequiresOnlyWhatItShips(t *testing.T) {
	t.Parallel()
	imported := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(root, "sdk"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			imported[strings.Trim(imp.Path.Value, `"`)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	required := regexp.MustCompile(`(?m)^\s*(?:require\s+)?([a-z0-9.-]+\.[a-z]+/\S+) v\S+`).FindAllStringSubmatch(readFile(t, "sdk/go.mod"), -1)
	if len(required) == 0 {
		t.Fatal("no requirement read from sdk/go.mod")
	}
	for _, m := range required {
		used := false
		for path := range imported {
			used = used || path == m[1] || strings.HasPrefix(path, m[1]+"/")
		}
		if !used {
			t.Errorf("sdk/go.mod requires %s, which no non-test file of the SDK imports", m[1])
		}
	}
}
