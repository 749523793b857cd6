package riskapi_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/problem"
	riskapi "github.com/riskapi/riskapi/sdk"
)

// sdkCodes reads the Code… constants of error.go with their values and the status
// their comment states ("// 404: …"): the SDK cannot import the server's codes (it
// must build without internal/), so the test compares the source.
func sdkCodes(t *testing.T) map[string]int {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "error.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	status := regexp.MustCompile(`^(\d{3}):`)
	codes := map[string]int{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			if len(v.Names) != 1 || !strings.HasPrefix(v.Names[0].Name, "Code") || len(v.Values) != 1 {
				continue
			}
			lit, ok := v.Values[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				t.Fatalf("%s is not a string literal", v.Names[0].Name)
			}
			code, _ := strconv.Unquote(lit.Value)
			m := status.FindStringSubmatch(strings.TrimSpace(v.Comment.Text()))
			if m == nil {
				t.Fatalf("%s has no \"// <status>: …\" comment", v.Names[0].Name)
			}
			codes[code], _ = strconv.Atoi(m[1])
		}
	}
	return codes
}

// TestCodesMatchTheServer: the SDK has a constant for every problem code the server
// sends and none it does not, each documented with the server's status, and its
// sentinel errors match by those codes.
func TestCodesMatchTheServer(t *testing.T) {
	t.Parallel()
	want := map[string]int{}
	for _, c := range problem.Codes() {
		want[string(c)] = c.Status()
	}
	if diff := cmp.Diff(want, sdkCodes(t)); diff != "" {
		t.Errorf("problem codes and statuses (-server +sdk):\n%s", diff)
	}
	for _, c := range problem.Codes() {
		got := &riskapi.Error{Status: c.Status(), Code: string(c)}
		sentinels := []*riskapi.Error{riskapi.ErrValidationFailed, riskapi.ErrIdempotencyKeyInvalid,
			riskapi.ErrIdempotencyKeyRequired, riskapi.ErrUnauthenticated, riskapi.ErrForbidden, riskapi.ErrNotFound,
			riskapi.ErrIdempotencyRequestInProgress, riskapi.ErrPayloadTooLarge, riskapi.ErrUnsupportedMediaType, riskapi.ErrPreconditionFailed, riskapi.ErrRangeNotSatisfiable, riskapi.ErrIdempotencyKeyReused,
			riskapi.ErrIdempotencyUnsupportedRoute, riskapi.ErrRateLimited, riskapi.ErrInternal, riskapi.ErrStoreUnavailable}
		n := slices.IndexFunc(sentinels, func(s *riskapi.Error) bool { return got.Is(s) })
		if n < 0 && c != problem.MethodNotAllowed {
			t.Errorf("no Err… sentinel matches %s", c)
		}
	}
}
