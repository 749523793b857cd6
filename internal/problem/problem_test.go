package problem_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/problem"
)

// TestContractTable: the status of every code is the one docs/errors.md
// gives it, and each has its own title and type.
func TestContractTable(t *testing.T) {
	t.Parallel()
	table := map[problem.Code]int{
		problem.ValidationFailed:             400,
		problem.IdempotencyKeyInvalid:        400,
		problem.IdempotencyKeyRequired:       400,
		problem.Unauthenticated:              401,
		problem.Forbidden:                    403,
		problem.NotFound:                     404,
		problem.MethodNotAllowed:             405,
		problem.IdempotencyRequestInProgress: 409,
		problem.PayloadTooLarge:              413,
		problem.IdempotencyKeyReused:         422,
		problem.IdempotencyUnsupportedRoute:  422,
		problem.RateLimited:                  429,
		problem.HeadersTooLarge:              431,
		problem.Internal:                     500,
		problem.StoreUnavailable:             503,
		problem.APIKeyExpired:                401,
		problem.IPNotAllowed:                 403,
	}
	titles := map[string]problem.Code{}
	for code, status := range table {
		if got := code.Status(); got != status {
			t.Errorf("%s: status %d, want %d", code, got, status)
		}
		if prev, dup := titles[code.Title()]; dup || code.Title() == "" {
			t.Errorf("%s: title %q empty or shared with %s", code, code.Title(), prev)
		}
		titles[code.Title()] = code
	}
	if got := problem.Code("NO_SUCH_CODE").Status(); got != http.StatusInternalServerError {
		t.Errorf("an unknown code is %d, want 500", got)
	}
	if got, want := problem.IdempotencyKeyReused.TypeURI(), "https://riskapi.dev/problems/idempotency-key-reused"; got != want {
		t.Errorf("TypeURI = %s, want %s", got, want)
	}
}

func TestConstructors(t *testing.T) {
	t.Parallel()
	p := problem.Invalid("title", "is required")
	want := &problem.Problem{Code: problem.ValidationFailed, Detail: "title: is required",
		Errors: []problem.FieldError{{Field: "title", Detail: "is required"}}}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("Invalid (-want +got):\n%s", diff)
	}
	if problem.Fields(nil) != nil {
		t.Errorf("Fields(nil) is not nil: a valid input would read as an error")
	}
	p = problem.Fields([]problem.FieldError{{Field: "likelihood", Detail: "too big"}, {Field: "impact", Detail: "too small"}})
	if p.Detail != "likelihood: too big; impact: too small" || len(p.Errors) != 2 {
		t.Errorf("Fields = %+v", p)
	}
	if got := problem.New(problem.NotFound, "no risk %s", "risk_1").Error(); got != "NOT_FOUND: no risk risk_1" {
		t.Errorf("Error() = %q", got)
	}
	wrapped := fmt.Errorf("handler: %w", &problem.Problem{Code: problem.RateLimited, RetryAfter: time.Second})
	if got := problem.As(wrapped); got == nil || got.Code != problem.RateLimited {
		t.Errorf("As through a wrap = %v", got)
	}
	if problem.As(errors.New("plain")) != nil {
		t.Errorf("As found a problem in a plain error")
	}
}

func TestJoinNamesEveryField(t *testing.T) {
	got := problem.As(problem.Join(nil, problem.Invalid("status", "bad"), nil, problem.Fields([]problem.FieldError{{Field: "limit", Detail: "too big"}, {Field: "sort", Detail: "unknown"}})))
	if got == nil || got.Code != problem.ValidationFailed || len(got.Errors) != 3 || got.Errors[2].Field != "sort" {
		t.Fatalf("Join = %+v, want one VALIDATION_FAILED naming status, limit, sort", got)
	}
	if got.Detail != "status: bad; limit: too big; sort: unknown" {
		t.Errorf("detail %q", got.Detail)
	}
	if problem.Join(nil, nil) != nil {
		t.Error("Join of nils is not nil")
	}
	other := problem.New(problem.NotFound, "no such risk")
	if err := problem.Join(problem.Invalid("status", "bad"), other); err != error(other) {
		t.Errorf("Join with a non-validation problem = %v, want it as it is", err)
	}
}

// TestRowsCountsTheRest: a file's detail names its first bad row and counts the
// others in plain words, one "error" or many, and how many the list leaves out.
func TestRowsCountsTheRest(t *testing.T) {
	row := func(n int) problem.FieldError {
		return problem.FieldError{Row: n, Field: "title", Detail: "is required"}
	}
	for _, c := range []struct {
		errs  []problem.FieldError
		total int
		want  string
	}{
		{[]problem.FieldError{row(2)}, 1, "row 2: title: is required"},
		{[]problem.FieldError{row(2), row(3)}, 2, "row 2: title: is required (and 1 more error)"},
		{[]problem.FieldError{row(2), row(3)}, 3, "row 2: title: is required (and 2 more errors); errors lists the first 2, 1 more is left out"},
	} {
		if got := problem.RowsOf(c.errs, c.total).Detail; got != c.want {
			t.Errorf("RowsOf(%d of %d) = %q, want %q", len(c.errs), c.total, got, c.want)
		}
	}
}
