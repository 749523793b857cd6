// Package riskview is a risk's public shape, in one place: the JSON every response,
// event and webhook shows (Risk), and the bodies that create, replace or change one
// (Write, Patch; Patch is also an inbound webhook's finding). Handlers, the store's
// recorded changes and the webhook receiver all use it, so a risk field is named once
// here (docs/architecture.md). view_test.go fails when a field of the domain is
// missing here or in docs/openapi.yaml.
package riskview

import (
	"strconv"
	"time"

	"github.com/riskapi/riskapi/internal/etag"
	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/risks"
)

// Risk is a risk as the API shows it (camelCase, absent numbers as null).
type Risk struct {
	ID          string    `json:"id"`
	Title       string    `json:"title"`
	Description string    `json:"description"`
	Category    string    `json:"category"`
	Likelihood  *int      `json:"likelihood"`
	Impact      *int      `json:"impact"`
	RiskScore   *int      `json:"riskScore"`
	Status      string    `json:"status"`
	Owner       string    `json:"owner"`
	Version     int64     `json:"version"` // also the ETag: "<version>"
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// ETag is the entity tag of r's responses: its version, quoted ("3").
func ETag(r *risks.Risk) string { return etag.Strong(strconv.FormatInt(r.Version, 10)) }

// Of returns r as the API shows it.
func Of(r *risks.Risk) Risk {
	return Risk{ID: r.ID, Title: r.Title, Description: r.Description, Category: r.Category,
		Likelihood: r.Likelihood, Impact: r.Impact, RiskScore: r.RiskScore, Status: string(r.Status),
		Owner: r.Owner, Version: r.Version, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

// Write is the body of POST and PUT: every field optional at the JSON level, the
// domain decides what is required. null is "not given".
type Write struct {
	Title       *string       `json:"title"`
	Description *string       `json:"description"`
	Category    *string       `json:"category"`
	Likelihood  *jsonbody.Int `json:"likelihood"`
	Impact      *jsonbody.Int `json:"impact"`
	RiskScore   *jsonbody.Int `json:"riskScore"`
	Status      *string       `json:"status"`
	Owner       *string       `json:"owner"`
}

// Fields converts w to the domain's fields.
func (w Write) Fields() risks.Fields {
	f := risks.Fields{Title: w.Title, Description: w.Description, Category: w.Category, Owner: w.Owner,
		Likelihood: intPtr(w.Likelihood), Impact: intPtr(w.Impact), RiskScore: intPtr(w.RiskScore)}
	if w.Status != nil {
		s := risks.Status(*w.Status)
		f.Status = &s
	}
	return f
}

// Patch is the body of PATCH — and the "data" of an inbound webhook's finding:
// absent members are kept; null clears an optional number and is refused for text
// fields.
type Patch struct {
	Title       jsonbody.Optional[string]       `json:"title"`
	Description jsonbody.Optional[string]       `json:"description"`
	Category    jsonbody.Optional[string]       `json:"category"`
	Likelihood  jsonbody.Optional[jsonbody.Int] `json:"likelihood"`
	Impact      jsonbody.Optional[jsonbody.Int] `json:"impact"`
	RiskScore   jsonbody.Optional[jsonbody.Int] `json:"riskScore"`
	Status      jsonbody.Optional[string]       `json:"status"`
	Owner       jsonbody.Optional[string]       `json:"owner"`
}

// Update converts p to a domain update. It also returns the name of a text field
// given as null ("" if none), which the caller must refuse.
func (p Patch) Update() (risks.Update, string) {
	var u risks.Update
	texts := []struct {
		name string
		in   jsonbody.Optional[string]
		out  **string
	}{{"title", p.Title, &u.Title}, {"description", p.Description, &u.Description},
		{"category", p.Category, &u.Category}, {"owner", p.Owner, &u.Owner}}
	for _, t := range texts {
		if t.in.Set {
			if t.in.Null {
				return u, t.name
			}
			v := t.in.Value
			*t.out = &v
		}
	}
	if p.Status.Set {
		if p.Status.Null {
			return u, "status"
		}
		s := risks.Status(p.Status.Value)
		u.Status = &s
	}
	u.Likelihood = nullable(p.Likelihood)
	u.Impact = nullable(p.Impact)
	u.RiskScore = nullable(p.RiskScore)
	return u, ""
}

func intPtr(n *jsonbody.Int) *int {
	if n == nil {
		return nil
	}
	v := int(*n)
	return &v
}

func nullable(o jsonbody.Optional[jsonbody.Int]) *risks.Nullable[int] {
	if !o.Set {
		return nil
	}
	return &risks.Nullable[int]{Value: int(o.Value), Null: o.Null}
}
