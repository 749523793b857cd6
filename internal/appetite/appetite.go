// Package appetite is a tenant's risk appetite (docs/register.md, Appetite): the
// highest riskScore it accepts, overall and per category. A risk whose riskScore is
// above its category's appetite (else the tenant's) is outside appetite; a write that
// moves a risk there emits risk.appetite_exceeded, once per crossing, in the write's
// own transaction (Recorder).
package appetite

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/riskapi/riskapi/internal/problem"
)

// MaxCategories bounds how many categories of one tenant carry an appetite: each is
// checked on every scored write of its risks.
const MaxCategories = 100

// Appetite is a tenant's appetite as stored.
type Appetite struct {
	// Overall is the tenant's appetite, 1–25, or nil for none.
	Overall *int
	// Categories maps a category (as first written; matched in any letter case) to
	// its appetite, 1–25.
	Categories map[string]int
	// Version is 1 at first and +1 for each change: the ETag of GET /v1/tenant.
	Version int64
}

// For returns the appetite that applies to a risk of category: the category's when
// it has one (any letter case), else Overall; false when neither is set.
func (a Appetite) For(category string) (int, bool) {
	for k, v := range a.Categories {
		if strings.EqualFold(k, category) {
			return v, true
		}
	}
	if a.Overall != nil {
		return *a.Overall, true
	}
	return 0, false
}

// Outside reports whether score is above the appetite of category.
func (a Appetite) Outside(category string, score *int) bool {
	if score == nil {
		return false
	}
	n, ok := a.For(category)
	return ok && *score > n
}

// Patch is a change of the appetite (PATCH /v1/tenant): Overall when SetOverall (nil
// clears it); each of Categories sets its category's appetite, or removes it when
// nil (a JSON merge patch, RFC 7396).
type Patch struct {
	SetOverall bool
	Overall    *int
	Categories map[string]*int
}

// Validate checks p's values. Errors: VALIDATION_FAILED naming each bad member.
func (p Patch) Validate() error {
	var bad []error
	if p.Overall != nil && (*p.Overall < 1 || *p.Overall > 25) {
		bad = append(bad, problem.Invalid("riskAppetite", "must be an integer from 1 to 25, or null"))
	}
	for k, v := range p.Categories {
		if k == "" || utf8.RuneCountInString(k) > 100 {
			bad = append(bad, problem.Invalid("categoryAppetite", "a category is 1–100 characters"))
		}
		if v != nil && (*v < 1 || *v > 25) {
			bad = append(bad, problem.Invalid("categoryAppetite."+k, "must be an integer from 1 to 25, or null to remove it"))
		}
	}
	return problem.Join(bad...)
}

// Apply returns a with p applied. Errors: VALIDATION_FAILED when the result would
// have more than MaxCategories categories.
func (a Appetite) Apply(p Patch) (Appetite, error) {
	out := Appetite{Overall: a.Overall, Categories: map[string]int{}, Version: a.Version}
	for k, v := range a.Categories {
		out.Categories[k] = v
	}
	if p.SetOverall {
		out.Overall = p.Overall
	}
	for k, v := range p.Categories {
		for old := range out.Categories {
			if strings.EqualFold(old, k) {
				delete(out.Categories, old)
			}
		}
		if v != nil {
			out.Categories[k] = *v
		}
	}
	if len(out.Categories) > MaxCategories {
		return a, problem.Invalid("categoryAppetite", "at most 100 categories may carry an appetite")
	}
	return out, nil
}

// Same reports whether a and b hold the same appetite (their versions aside).
func (a Appetite) Same(b Appetite) bool {
	if (a.Overall == nil) != (b.Overall == nil) || (a.Overall != nil && *a.Overall != *b.Overall) {
		return false
	}
	if len(a.Categories) != len(b.Categories) {
		return false
	}
	for k, v := range a.Categories {
		if w, ok := b.Categories[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// ErrVersionChanged refuses a change whose If-Match names another version; Current
// is the appetite as stored.
type ErrVersionChanged struct{ Current Appetite }

func (e *ErrVersionChanged) Error() string { return "appetite: the version changed" }

// IfMatch reports whether a change may apply over the stored version; nil: any.
type IfMatch func(version int64) bool

// Reader reads a tenant's appetite.
type Reader interface {
	Get(ctx context.Context, tenantID string) (Appetite, error)
}
