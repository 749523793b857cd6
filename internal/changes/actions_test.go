package changes

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEveryActionConstantIsInTheRegistry: an Action constant of actions.go without
// its Registry row (or a row without its constant, or a row twice) fails here, before
// any write of it is refused.
func TestEveryActionConstantIsInTheRegistry(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "actions.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var consts []string
	ast.Inspect(f, func(n ast.Node) bool {
		v, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		if id, typed := v.Type.(*ast.Ident); !typed || id.Name != "Action" {
			return true
		}
		for _, val := range v.Values {
			s, _ := strconv.Unquote(val.(*ast.BasicLit).Value)
			consts = append(consts, s)
		}
		return true
	})
	var rows []string
	seen := map[Action]bool{}
	for _, d := range Registry {
		if seen[d.Action] {
			t.Errorf("Registry declares %s twice", d.Action)
		}
		seen[d.Action] = true
		rows = append(rows, string(d.Action))
		if d.When == "" || d.Changes == "" {
			t.Errorf("Registry's %s says nothing of when or what it records", d.Action)
		}
	}
	if diff := cmp.Diff(consts, rows); diff != "" {
		t.Errorf("actions.go's constants and Registry differ (-constants +Registry):\n%s", diff)
	}
}

type tx struct{}

func (tx) InTx(ctx context.Context, fn func(ctx context.Context) error) error { return fn(ctx) }

type kept []Change

func (k *kept) Record(_ context.Context, c Change) error { *k = append(*k, c); return nil }

// TestPointRefusesAnUndeclaredAction: a store recording an action no row of Registry
// declares fails its write (the audit log's filter could never find it), and a
// declared one is recorded with its target's type.
func TestPointRefusesAnUndeclaredAction(t *testing.T) {
	var rec kept
	p := Point{Tx: tx{}, Recorder: &rec}
	err := p.Write(context.Background(), func(context.Context) (Change, error) {
		return Change{TenantID: "t", Action: "risk.archived", Target: Target{ID: "risk_1"}}, nil
	})
	if err == nil {
		t.Fatal("a change of risk.archived, declared nowhere, was recorded")
	}
	err = p.WriteAll(context.Background(), func(context.Context) ([]Change, error) {
		return []Change{{TenantID: "t", Action: RiskCreated}, {TenantID: "t", Action: "risk.archived"}}, nil
	})
	if err == nil {
		t.Fatal("a batch with a change of risk.archived was recorded")
	}
	if len(rec) != 0 {
		t.Fatalf("recorded %v", rec)
	}
	err = p.Write(context.Background(), func(context.Context) (Change, error) {
		return Change{TenantID: "t", Action: UserRoleChanged, Target: Target{ID: "usr_1"}}, nil
	})
	if err != nil || len(rec) != 1 || rec[0].Target.Type != "user" || rec[0].Actor.Type != ActorSystem {
		t.Fatalf("user.role_changed: %v, recorded %+v", err, rec)
	}
}

type userView struct{ ID string }

func (userView) Resource() string { return "user" }

// TestPointRefusesAnotherResourcesView: a change carries its own resource's public
// view, never another's (an api_key.created showing a user).
func TestPointRefusesAnotherResourcesView(t *testing.T) {
	var rec kept
	p := Point{Tx: tx{}, Recorder: &rec}
	err := p.Write(context.Background(), func(context.Context) (Change, error) {
		return Change{TenantID: "t", Action: APIKeyCreated, After: userView{"usr_1"}}, nil
	})
	if err == nil || len(rec) != 0 {
		t.Fatalf("api_key.created showing a user's view: %v, recorded %+v", err, rec)
	}
	err = p.Write(context.Background(), func(context.Context) (Change, error) {
		return Change{TenantID: "t", Action: UserDeleted, Before: userView{"usr_1"}}, nil
	})
	if err != nil || len(rec) != 1 {
		t.Fatalf("user.deleted showing its user: %v, recorded %+v", err, rec)
	}
}
