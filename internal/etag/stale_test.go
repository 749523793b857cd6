package etag

import (
	"strings"
	"testing"
)

// TestStaleDetail: a 412 says why the tag did not match — changed since read, a
// weak tag of the very version, or a version never issued — so a client mends the
// right thing.
func TestStaleDetail(t *testing.T) {
	for _, tt := range []struct{ header, want string }{
		{`"3"`, `does not name the risk's version "4" (it changed since you read it)`},
		{`"1", "9"`, `(it changed since you read it)`},
		{`W/"4"`, `the weak W/"4" never matches; send "4"`},
		{`"9"`, `names no version this risk has had (it is at "4"`},
		{`"0"`, `names no version this risk has had`},
		{`"abc"`, `names no version this risk has had`},
		{`"abc", W/"2"`, `(it changed since you read it)`},
		{`"04"`, `names no version this risk has had`},
		{`"+3"`, `names no version this risk has had`},
	} {
		l, err := Parse(tt.header)
		if err != nil {
			t.Fatal(err)
		}
		if got := StaleDetail(l, "risk", 4); !strings.Contains(got, tt.want) {
			t.Errorf("If-Match %s: %q, want it to hold %q", tt.header, got, tt.want)
		}
	}
}
