package server

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/tenants"
)

// TestNotFoundTable: every domain's not-found sentinel, however wrapped, reaches the
// client as 404 NOT_FOUND with its own detail, and is not logged as unexpected.
func TestNotFoundTable(t *testing.T) {
	for _, nf := range notFound {
		p, unexpected := toProblem(fmt.Errorf("handler: %w", nf.err))
		if p.Status() != http.StatusNotFound || p.Detail != nf.detail || unexpected {
			t.Errorf("%v → %d %q (unexpected %v), want 404 %q", nf.err, p.Status(), p.Detail, unexpected, nf.detail)
		}
	}
	// A validation sentinel keeps its own problem.
	if p, _ := toProblem(tenants.ErrEmailTaken); p.Status() != http.StatusBadRequest || p.Errors[0].Field != "email" {
		t.Errorf("ErrEmailTaken → %+v, want 400 naming email", p)
	}
}
