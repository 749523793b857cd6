package changes_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/changes"
)

func TestPrevious(t *testing.T) {
	t.Parallel()
	type view struct {
		Title     string `json:"title"`
		Score     *int   `json:"score"`
		Extra     string `json:"extra,omitempty"`
		UpdatedAt string `json:"updatedAt"`
	}
	three := 3
	tests := []struct {
		name          string
		before, after view
		want          map[string]string
	}{
		{"nothing", view{Title: "a"}, view{Title: "a", UpdatedAt: "later"}, map[string]string{}},
		{"text", view{Title: "a"}, view{Title: "b"}, map[string]string{"title": `"a"`}},
		{"set a number", view{}, view{Score: &three}, map[string]string{"score": "null"}},
		{"clear a number", view{Score: &three}, view{}, map[string]string{"score": "3"}},
		{"member appears", view{}, view{Extra: "x"}, map[string]string{"extra": "null"}},
		{"member goes", view{Extra: "x"}, view{}, map[string]string{"extra": `"x"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := changes.Previous(tt.before, tt.after, "updatedAt")
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]string{}
			for k, v := range got {
				out[k] = string(v)
			}
			if diff := cmp.Diff(tt.want, out); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := changes.Previous([]int{1}, json.RawMessage(`{}`)); err == nil {
		t.Error("Previous of a non-object succeeded")
	}
}
