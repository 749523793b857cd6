package etag_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/etag"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want etag.List
	}{
		{`*`, etag.List{Any: true}},
		{` * `, etag.List{Any: true}},
		{`"3"`, etag.List{Tags: []etag.Tag{{Opaque: "3"}}}},
		{`"3", W/"4",,"x"`, etag.List{Tags: []etag.Tag{{Opaque: "3"}, {Weak: true, Opaque: "4"}, {Opaque: "x"}}}},
		{`""`, etag.List{Tags: []etag.Tag{{Opaque: ""}}}},
	}
	for _, tt := range tests {
		got, err := etag.Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
	for _, bad := range []string{``, `3`, `"3`, `"3" "4"`, `W/3`, `"a b"`, `*, "3"`, `,`} {
		if _, err := etag.Parse(bad); !errors.Is(err, etag.ErrSyntax) {
			t.Errorf("Parse(%q) = %v, want ErrSyntax", bad, err)
		}
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	l, err := etag.Parse(`W/"3", "5"`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		tag          string
		strong, weak bool
	}{{"3", false, true}, {"5", true, true}, {"4", false, false}} {
		if got := l.MatchStrong(tt.tag); got != tt.strong {
			t.Errorf("MatchStrong(%s) = %v", tt.tag, got)
		}
		if got := l.MatchWeak(tt.tag); got != tt.weak {
			t.Errorf("MatchWeak(%s) = %v", tt.tag, got)
		}
	}
	if any := (etag.List{Any: true}); !any.MatchStrong("9") || !any.MatchWeak("9") {
		t.Error(`"*" does not match`)
	}
	if got := etag.Strong("7"); got != `"7"` {
		t.Errorf("Strong = %s", got)
	}
}
