package audit_test

import (
	"encoding/json"
	"testing"

	"github.com/riskapi/riskapi/internal/audit"
	"github.com/riskapi/riskapi/internal/changes"
)

type view struct {
	ID        string  `json:"id"`
	Title     string  `json:"title"`
	Owner     *string `json:"owner"`
	UpdatedAt string  `json:"updatedAt"`
}

func (view) Resource() string { return "risk" }

// listView is a public form that is no JSON object.
type listView []int

func (listView) Resource() string { return "risk" }

func TestDiff(t *testing.T) {
	t.Parallel()
	ann := "ann"
	tests := []struct {
		name string
		c    changes.Change
		want string
	}{
		{"created", changes.Change{After: view{ID: "r", Title: "a", UpdatedAt: "t"}}, `{"title":{"from":null,"to":"a"}}`},
		{"updated", changes.Change{Before: view{ID: "r", Title: "a", UpdatedAt: "t"}, After: view{ID: "r", Title: "b", Owner: &ann, UpdatedAt: "u"}},
			`{"owner":{"from":null,"to":"ann"},"title":{"from":"a","to":"b"}}`},
		{"deleted", changes.Change{Before: view{ID: "r", Title: "a", Owner: &ann}}, `{"owner":{"from":"ann","to":null},"title":{"from":"a","to":null}}`},
		{"nothing", changes.Change{Before: view{ID: "r"}, After: view{ID: "r", UpdatedAt: "u"}}, `null`},
		{"no forms", changes.Change{}, `null`},
		{"secret", changes.Change{Before: view{ID: "r"}, After: view{ID: "r"}, Secret: []string{"password"}}, `{"password":"changed"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := audit.Diff(tt.c)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(got)
			if string(b) != tt.want {
				t.Errorf("Diff = %s, want %s", b, tt.want)
			}
			var back map[string]audit.Field
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("read back: %v", err)
			}
			if again, _ := json.Marshal(back); string(again) != tt.want {
				t.Errorf("read back as %s", again)
			}
		})
	}
	if _, err := audit.Diff(changes.Change{After: listView{1}}); err == nil {
		t.Error("Diff of a public form that is no object succeeded")
	}
}
