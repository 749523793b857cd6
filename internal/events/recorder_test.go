package events_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEmissionOnlyAtTheRecordingPoint guards docs/architecture.md's claim that
// events are emitted only through the recording point: outside package events,
// no non-test Go file calls Emit or constructs an events.Recorder but the wiring
// in internal/app. A store wrapper in an HTTP adapter (as riskhttp.Emitting once
// was) fails it.
func TestEmissionOnlyAtTheRecordingPoint(t *testing.T) {
	t.Parallel()
	emit := regexp.MustCompile(`\.Emit\(|events\.Recorder\{`)
	allowed := map[string]bool{"app/app.go": true}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "events" || d.Name() == "node_modules" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || allowed[rel] {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if loc := emit.FindIndex(b); loc != nil {
			t.Errorf("internal/%s emits events itself (%q): record the change through its store's changes.Point instead", rel, b[loc[0]:loc[1]])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
