package risks_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
)

func str(s string) *string { return &s }
func num(n int) *int       { return &n }
func status(s risks.Status) *risks.Status {
	return &s
}

var (
	t0 = time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Hour)
)

func fields(t *testing.T, err error) []string {
	t.Helper()
	p := problem.As(err)
	if p == nil || p.Code != problem.ValidationFailed {
		t.Fatalf("err = %v, want VALIDATION_FAILED", err)
	}
	var out []string
	for _, e := range p.Errors {
		out = append(out, e.Field)
		if !strings.Contains(p.Detail, e.Field) {
			t.Errorf("detail %q does not mention %q", p.Detail, e.Field)
		}
	}
	return out
}

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   risks.Fields
		want risks.Risk
	}{
		{"defaults", risks.Fields{Title: str("t")},
			risks.Risk{Title: "t", Status: risks.StatusOpen}},
		{"derived score", risks.Fields{Title: str("t"), Likelihood: num(3), Impact: num(4)},
			risks.Risk{Title: "t", Likelihood: num(3), Impact: num(4), RiskScore: num(12), Status: risks.StatusOpen}},
		{"one factor, no score", risks.Fields{Title: str("t"), Impact: num(4)},
			risks.Risk{Title: "t", Impact: num(4), Status: risks.StatusOpen}},
		{"given score kept", risks.Fields{Title: str("t"), Likelihood: num(5), Impact: num(5), RiskScore: num(1)},
			risks.Risk{Title: "t", Likelihood: num(5), Impact: num(5), RiskScore: num(1), Status: risks.StatusOpen}},
		{"everything", risks.Fields{Title: str("t"), Description: str("d"), Category: str("c"), Owner: str("o"),
			Status: status(risks.StatusClosed)},
			risks.Risk{Title: "t", Description: "d", Category: "c", Owner: "o", Status: risks.StatusClosed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := risks.New("risk_1", "ten_1", tt.in, t0)
			if err != nil {
				t.Fatal(err)
			}
			tt.want.ID, tt.want.TenantID, tt.want.CreatedAt, tt.want.UpdatedAt = "risk_1", "ten_1", t0, t0
			tt.want.Version = 1
			if diff := cmp.Diff(&tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   risks.Fields
		want []string
	}{
		{"no title", risks.Fields{}, []string{"title"}},
		// A missing title is named with every other fault, not alone.
		{"no title and a bad factor", risks.Fields{Likelihood: num(9), Status: status("Open")}, []string{"title", "likelihood", "status"}},
		{"empty title", risks.Fields{Title: str("")}, []string{"title"}},
		{"201 runes", risks.Fields{Title: str(strings.Repeat("é", 201))}, []string{"title"}},
		{"ranges", risks.Fields{Title: str("t"), Likelihood: num(0), Impact: num(6), RiskScore: num(26)},
			[]string{"likelihood", "impact", "riskScore"}},
		// The client sent no score: only the field it sent is named.
		{"a bad factor is named alone", risks.Fields{Title: str("t"), Likelihood: num(6), Impact: num(5)},
			[]string{"likelihood"}},
		{"status", risks.Fields{Title: str("t"), Status: status("Open")}, []string{"status"}},
		{"lengths", risks.Fields{Title: str("t"), Description: str(strings.Repeat("d", 10001)),
			Category: str(strings.Repeat("c", 101)), Owner: str(strings.Repeat("o", 201))},
			[]string{"description", "category", "owner"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := risks.New("risk_1", "ten_1", tt.in, t0)
			if diff := cmp.Diff(tt.want, fields(t, err)); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
}

func base(t *testing.T) *risks.Risk {
	t.Helper()
	ext := "ext-1"
	r, err := risks.New("risk_1", "ten_1", risks.Fields{Title: str("t"), Description: str("d"), Category: str("c"),
		Owner: str("o"), Likelihood: num(2), Impact: num(3), Status: status(risks.StatusMitigated)}, t0)
	if err != nil {
		t.Fatal(err)
	}
	r.ExternalID = &ext
	return r
}

func TestApply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		update risks.Update
		change func(*risks.Risk)
	}{
		{"nothing", risks.Update{}, func(*risks.Risk) {}},
		{"text", risks.Update{Title: str("new"), Owner: str("")}, func(r *risks.Risk) { r.Title, r.Owner = "new", "" }},
		{"factor rederives", risks.Update{Impact: &risks.Nullable[int]{Value: 5}},
			func(r *risks.Risk) { r.Impact, r.RiskScore = num(5), num(10) }},
		{"score given wins", risks.Update{Impact: &risks.Nullable[int]{Value: 5}, RiskScore: &risks.Nullable[int]{Value: 2}},
			func(r *risks.Risk) { r.Impact, r.RiskScore = num(5), num(2) }},
		{"clear a factor clears the score", risks.Update{Likelihood: &risks.Nullable[int]{Null: true}},
			func(r *risks.Risk) { r.Likelihood, r.RiskScore = nil, nil }},
		{"clear the score", risks.Update{RiskScore: &risks.Nullable[int]{Null: true}},
			func(r *risks.Risk) { r.RiskScore = nil }},
		{"status", risks.Update{Status: status(risks.StatusClosed)}, func(r *risks.Risk) { r.Status = risks.StatusClosed }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := base(t)
			want := base(t)
			tt.change(want)
			want.UpdatedAt = t1
			if err := r.Apply(tt.update, t1); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, r); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyRefusedLeavesRiskUnchanged(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		u    risks.Update
		want []string
	}{
		{risks.Update{Title: str("")}, []string{"title"}},
		// No riskScore: the client did not send one.
		{risks.Update{Owner: str("new"), Impact: &risks.Nullable[int]{Value: 6}}, []string{"impact"}},
		{risks.Update{Likelihood: &risks.Nullable[int]{Value: 0}}, []string{"likelihood"}},
		{risks.Update{Status: status("done")}, []string{"status"}},
		{risks.Update{RiskScore: &risks.Nullable[int]{Value: 0}}, []string{"riskScore"}},
	} {
		r := base(t)
		err := r.Apply(tt.u, t1)
		if diff := cmp.Diff(tt.want, fields(t, err)); diff != "" {
			t.Errorf("fields (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(base(t), r); diff != "" {
			t.Errorf("refused update changed the risk (-before +after):\n%s", diff)
		}
	}
}

func TestReplace(t *testing.T) {
	t.Parallel()
	r := base(t)
	if err := r.Replace(risks.Fields{Title: str("only"), Likelihood: num(4), Impact: num(4)}, t1); err != nil {
		t.Fatal(err)
	}
	ext := "ext-1"
	want := &risks.Risk{ID: "risk_1", TenantID: "ten_1", Title: "only", Likelihood: num(4), Impact: num(4),
		RiskScore: num(16), Status: risks.StatusOpen, ExternalID: &ext, Version: 1, CreatedAt: t0, UpdatedAt: t1} // the version is the Service's to count
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	r = base(t)
	err := r.Replace(risks.Fields{Description: str("no title")}, t1)
	if diff := cmp.Diff([]string{"title"}, fields(t, err)); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(base(t), r); diff != "" {
		t.Errorf("refused replace changed the risk (-before +after):\n%s", diff)
	}
}
