package architecture_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/audit"
	"github.com/riskapi/riskapi/internal/events"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/tenants"
)

// The lists below each have one source in the server's Go code; the other files
// that name them are copies a reader or another program relies on. These tests
// fail when a copy drifts from its source, naming the file to fix.

// specEnum returns the enum of the schema name in docs/openapi.yaml.
func specEnum(t *testing.T, name string) []string {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile(filepath.Join(root, "docs", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ref, ok := doc.Components.Schemas[name]
	if !ok || ref.Value == nil {
		t.Fatalf("docs/openapi.yaml has no schema %s", name)
	}
	var out []string
	for _, v := range ref.Value.Enum {
		out = append(out, fmt.Sprint(v))
	}
	return out
}

// specMapping returns the discriminator values of the spec's union schema name, in
// the order of its oneOf (a typed event per event type, docs/openapi.yaml).
func specMapping(t *testing.T, name string) []string {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile(filepath.Join(root, "docs", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ref, ok := doc.Components.Schemas[name]
	if !ok || ref.Value == nil || ref.Value.Discriminator == nil {
		t.Fatalf("docs/openapi.yaml has no schema %s with a discriminator", name)
	}
	byRef := map[string]string{}
	for k, v := range ref.Value.Discriminator.Mapping {
		byRef[v.Ref] = k
	}
	var out []string
	for _, member := range ref.Value.OneOf {
		out = append(out, byRef[member.Ref])
	}
	return out
}

// tsUnion returns the string literals of the generated TypeScript type name in
// sdk-ts/src/openapi.ts (npm run generate; `Name: "a" | "b";`).
func tsUnion(t *testing.T, name string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s*` + name + `: ((?:"[^"]*"(?: \| )?)+);$`).FindStringSubmatch(readFile(t, "sdk-ts/src/openapi.ts"))
	if m == nil {
		t.Fatalf("sdk-ts/src/openapi.ts has no union type %s", name)
	}
	return quoted(m[1])
}

var quotedString = regexp.MustCompile(`"([^"\\]*)"`)

// quoted returns the double-quoted strings of s, in order.
func quoted(s string) []string {
	var out []string
	for _, m := range quotedString.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// goConst is a string constant of a Go file: its name, value, type (when
// declared with one) and line comment.
type goConst struct{ name, value, typ, comment string }

// goStringConsts returns the string constants declared in the Go file rel.
func goStringConsts(t *testing.T, rel string) []goConst {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, rel), nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var out []goConst
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			typ := ""
			if id, ok := v.Type.(*ast.Ident); ok {
				typ = id.Name
			}
			for i, val := range v.Values {
				if lit, ok := val.(*ast.BasicLit); ok && lit.Kind == token.STRING && i < len(v.Names) {
					s, _ := strconv.Unquote(lit.Value)
					out = append(out, goConst{v.Names[i].Name, s, typ, strings.TrimSpace(v.Comment.Text())})
				}
			}
		}
	}
	return out
}

// webArrays returns, for each constant array of strings in the dashboard's source
// (web/src: `const NAME = ["a", …]`) that names any of want, its strings without
// "" (an "all" choice).
// The dashboard may take its lists from the SDK instead; a copy it keeps must be
// whole.
func webArrays(t *testing.T, want []string) map[string][]string {
	t.Helper()
	array := regexp.MustCompile(`const\s+(\w+)\s*(?::[^=]+)?=\s*\[\s*("[^"]*"\s*(?:,\s*"[^"]*"\s*)*),?\s*\]`)
	out := map[string][]string{}
	err := filepath.WalkDir(filepath.Join(root, "web", "src"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".ts") || strings.HasSuffix(p, ".tsx")) ||
			strings.Contains(p, ".test.") {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		for _, m := range array.FindAllStringSubmatch(readFile(t, filepath.ToSlash(rel)), -1) {
			items := slices.DeleteFunc(quoted(m[2]), func(s string) bool { return s == "" })
			if slices.ContainsFunc(items, func(s string) bool { return slices.Contains(want, s) }) {
				out[filepath.ToSlash(rel)+" ("+m[1]+")"] = items
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameList fails the test when got, a copy in where, differs from want.
func sameList(t *testing.T, where string, want, got []string) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s drifted from its source (-source +copy):\n%s", where, diff)
	}
}

func strs[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

// TestEventTypesHaveOneSource: events.Types is the list of event types; the Go
// SDK's constants, the spec's EventType, the TypeScript SDK's generated type, the
// table of docs/events.md and any list the dashboard keeps say the same.
func TestEventTypesHaveOneSource(t *testing.T) {
	t.Parallel()
	want := strs(events.Types)
	var sdk []string
	for _, c := range goStringConsts(t, "sdk/enums_gen.go") {
		if c.typ == "EventType" {
			sdk = append(sdk, c.value)
		}
	}
	sameList(t, "sdk/enums_gen.go (EventType constants; go generate ./internal/changes/)", want, sdk)
	sameList(t, "docs/openapi.yaml (EventTypeName)", want, specEnum(t, "EventTypeName"))
	sameList(t, "docs/openapi.yaml (Event's discriminator mapping)", want, specMapping(t, "Event"))
	sameList(t, "docs/openapi.yaml (EndpointEventType, less its \"*\")", want,
		slices.DeleteFunc(specEnum(t, "EndpointEventType"), func(s string) bool { return s == "*" }))
	sameList(t, "sdk-ts/src/openapi.ts (EventTypeName; npm run generate)", want, tsUnion(t, "EventTypeName"))
	var doc []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+\\.[a-z_]+)` \\|").FindAllStringSubmatch(readFile(t, "docs/events.md"), -1) {
		doc = append(doc, m[1])
	}
	sameList(t, "docs/events.md (the table of types)", want, doc)
	for where, got := range webArrays(t, want) {
		sameList(t, where, want, got)
	}
}

// TestAuditActionsHaveOneSource: audit.Actions is the list of audit-log actions;
// the spec's AuditAction, the TypeScript SDK's generated type (which the
// dashboard's action filter is typed over, web/src/lists.ts) and any list the
// dashboard keeps say the same.
func TestAuditActionsHaveOneSource(t *testing.T) {
	t.Parallel()
	want := audit.Actions
	sameList(t, "docs/openapi.yaml (AuditAction)", want, specEnum(t, "AuditAction"))
	sameList(t, "sdk-ts/src/openapi.ts (AuditAction; npm run generate)", want, tsUnion(t, "AuditAction"))
	for where, got := range webArrays(t, want) {
		sameList(t, where, want, got)
	}
}

// TestScopesHaveOneSource: tenants.AllScopes is the list of API-key scopes; the
// spec's Scope, the TypeScript SDK's generated type and any list the dashboard
// keeps say the same.
func TestScopesHaveOneSource(t *testing.T) {
	t.Parallel()
	want := strs(tenants.AllScopes)
	sameList(t, "docs/openapi.yaml (Scope)", want, specEnum(t, "Scope"))
	sameList(t, "sdk-ts/src/openapi.ts (Scope; npm run generate)", want, tsUnion(t, "Scope"))
	for where, got := range webArrays(t, want) {
		sameList(t, where, want, got)
	}
}

// TestErrorCodesHaveOneSource: internal/problem is the vocabulary of error codes,
// with their statuses and titles; the spec's ErrorCode, the TypeScript SDK's
// generated type, the Go SDK's Code… constants (each commented with its status,
// "// 404: …") and docs/errors.md (its summary table and one section per code)
// say the same. The SDK's sentinels are checked by internal/sdktest/codes_test.go.
func TestErrorCodesHaveOneSource(t *testing.T) {
	t.Parallel()
	want := strs(problem.Codes())
	slices.Sort(want)
	sorted := func(xs []string) []string { slices.Sort(xs); return xs }
	sameList(t, "docs/openapi.yaml (ErrorCode)", want, sorted(specEnum(t, "ErrorCode")))
	sameList(t, "sdk-ts/src/openapi.ts (ErrorCode; npm run generate)", want, sorted(tsUnion(t, "ErrorCode")))

	var wantStatus, sdk []string
	for _, c := range problem.Codes() {
		wantStatus = append(wantStatus, fmt.Sprintf("%d %s", c.Status(), c))
	}
	for _, c := range goStringConsts(t, "sdk/error.go") {
		if strings.HasPrefix(c.name, "Code") {
			status, _, _ := strings.Cut(c.comment, ":")
			sdk = append(sdk, status+" "+c.value)
		}
	}
	sameList(t, "sdk/error.go (Code constants and the status of their comments)", sorted(wantStatus), sorted(sdk))

	doc := readFile(t, "docs/errors.md")
	var wantRows, rows, sections []string
	for _, c := range problem.Codes() {
		wantRows = append(wantRows, fmt.Sprintf("%d %s %s", c.Status(), c, c.Title()))
	}
	for _, m := range regexp.MustCompile("(?m)^\\| (\\d{3}) \\| `([A-Z_]+)` \\| ([^|]+) \\|").FindAllStringSubmatch(doc, -1) {
		rows = append(rows, fmt.Sprintf("%s %s %s", m[1], m[2], strings.TrimSpace(m[3])))
	}
	for _, m := range regexp.MustCompile(`(?m)^## ([A-Z_]+)$`).FindAllStringSubmatch(doc, -1) {
		sections = append(sections, m[1])
	}
	slices.Sort(wantRows)
	slices.Sort(rows)
	sameList(t, "docs/errors.md (Summary: status, code, title)", wantRows, rows)
	sameList(t, "docs/errors.md (one section per code)", want, sorted(sections))
}
