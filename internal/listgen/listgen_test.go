package listgen_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/listgen"
)

// TestGeneratedFilesAreCurrent fails when a file cmd/listgen writes differs from
// what its sources (docs/openapi.yaml, changes.Registry) make of it now: run
// `go generate ./internal/changes/` and commit the result.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := listgen.Files(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 {
		t.Errorf("generated %d files, want 4", len(files))
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s is stale; run go generate ./internal/changes/ (-generated +on disk):\n%s", path, diff)
		}
	}
}
