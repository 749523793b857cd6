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

// TestMembersAreTheDecodedMembers: Members splits a view's JSON by hand; each member
// it returns is the one json.Unmarshal reads, whatever the values hold — nested
// objects and arrays, strings with quotes, escapes, braces and commas, keys that
// need escaping — and anything but an object or null is refused.
func TestMembersAreTheDecodedMembers(t *testing.T) {
	t.Parallel()
	type inner struct {
		A []any          `json:"a"`
		M map[string]any `json:"m,omitempty"`
	}
	type view struct {
		Title    string            `json:"title"`
		Score    *int              `json:"score"`
		Tags     []string          `json:"tags"`
		Inner    inner             `json:"inner"`
		Meta     map[string]string `json:"metadata"`
		Odd      string            `json:"we\"ird<key>"`
		Empty    struct{}          `json:"empty"`
		Nothing  []int             `json:"nothing"`
		Raw      json.RawMessage   `json:"raw"`
		Float    float64           `json:"float"`
		Unicode  string            `json:"unicode"`
		Brackets string            `json:"brackets"`
	}
	seven := 7
	cases := []any{
		view{},
		view{Title: `a "quoted", {braced} [title] \ with \\ escapes`, Score: &seven, Tags: []string{"x", "}", "]", ","},
			Inner: inner{A: []any{1, "two", []any{3, map[string]any{"four": "}"}}, nil}, M: map[string]any{"k": map[string]any{}}},
			Meta:  map[string]string{"<b>": "&amp;", "": "empty key"}, Raw: json.RawMessage(`{"x":[1,{"y":"}"}]}`),
			Float: 1.5e-7, Unicode: "é \u2028 \U0001F600 \x00", Brackets: "[[{{"},
		map[string]any{},
		map[string]any{"only": true},
		map[string]any{"a\\b": 1, "c": "d"},
		nil,
	}
	for i, v := range cases {
		raw, _ := json.Marshal(v)
		var want map[string]json.RawMessage
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		got, err := changes.Members(v)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if (got == nil) != (want == nil) || len(got) != len(want) {
			t.Fatalf("case %d: %d members (nil %t), want %d (nil %t)", i, len(got), got == nil, len(want), want == nil)
		}
		for k, w := range want {
			if g, ok := got[k]; !ok || string(g) != string(w) {
				t.Errorf("case %d, member %q: %s, want %s", i, k, g, w)
			}
		}
	}
	for _, v := range []any{[]int{1}, "text", 3, json.RawMessage(`[{"a":1}]`)} {
		if _, err := changes.Members(v); err == nil {
			t.Errorf("Members(%v) succeeded on no object", v)
		}
	}
}
