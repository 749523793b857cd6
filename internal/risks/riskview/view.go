// Package riskview is a risk's public shape, in one place: the JSON every response,
// event and webhook shows (Risk), and the bodies that create, replace or change one
// (Write, Patch; Patch is also an inbound webhook's finding). Handlers, the store's
// recorded changes and the webhook receiver all use it, so a risk field is named once
// here (docs/architecture.md). view_test.go fails when a field of the domain is
// missing here or in docs/openapi.yaml.
package riskview

import (
	"maps"
	"strconv"
	"time"

	"github.com/riskapi/riskapi/internal/etag"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
)

// Risk is a risk as the API shows it (camelCase, absent numbers as null).
type Risk struct {
	ID          string  `json:"id"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	Category    string  `json:"category"`
	Likelihood  *int    `json:"likelihood"`
	Impact      *int    `json:"impact"`
	RiskScore   *int    `json:"riskScore"`
	Status      string  `json:"status"`
	Owner       Owner   `json:"owner"`
	Treatment   *string `json:"treatment"`
	ReviewDate  *string `json:"reviewDate"` // YYYY-MM-DD
	// ReviewEvery is the review cadence: P1M, P3M, P6M, P1Y or null.
	ReviewEvery *string `json:"reviewEvery"`
	// ResidualScore is read-only: residualLikelihood × residualImpact, or null.
	ResidualLikelihood *int              `json:"residualLikelihood"`
	ResidualImpact     *int              `json:"residualImpact"`
	ResidualScore      *int              `json:"residualScore"`
	Metadata           map[string]string `json:"metadata"` // {} when empty, never null
	Version            int64             `json:"version"`  // also the ETag: "<version>"
	CreatedAt          time.Time         `json:"createdAt"`
	UpdatedAt          time.Time         `json:"updatedAt"`
	// Livemode is false for a risk of the tenant's sandbox (docs/sandboxes.md).
	Livemode bool `json:"livemode"`
}

// ETag is the entity tag of r's responses: its version, quoted ("3").
func ETag(r *risks.Risk) string { return etag.Strong(strconv.FormatInt(r.Version, 10)) }

// Of returns r as the API shows it.
func Of(r *risks.Risk) Risk {
	md := map[string]string{}
	maps.Copy(md, r.Metadata)
	var treatment *string
	if r.Treatment != nil {
		t := string(*r.Treatment)
		treatment = &t
	}
	var every *string
	if r.ReviewEvery != nil {
		e := string(*r.ReviewEvery)
		every = &e
	}
	return Risk{ID: r.ID, Title: r.Title, Description: r.Description, Category: r.Category,
		Likelihood: r.Likelihood, Impact: r.Impact, RiskScore: r.RiskScore, Status: string(r.Status),
		Owner: Owner{UserID: r.OwnerUserID, Name: r.Owner}, Treatment: treatment, ReviewDate: r.ReviewDate, ReviewEvery: every,
		ResidualLikelihood: r.ResidualLikelihood, ResidualImpact: r.ResidualImpact,
		ResidualScore: r.ResidualScore, Metadata: md,
		Version: r.Version, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		Livemode: ids.Livemode(r.TenantID)}
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
	Owner       *OwnerWrite   `json:"owner"`
	Treatment   *string       `json:"treatment"`
	ReviewDate  *string       `json:"reviewDate"`
	ReviewEvery *string       `json:"reviewEvery"`
	// ResidualLikelihood, ResidualImpact: 1–5.
	ResidualLikelihood *jsonbody.Int     `json:"residualLikelihood"`
	ResidualImpact     *jsonbody.Int     `json:"residualImpact"`
	Metadata           map[string]string `json:"metadata"`
}

// Fields converts w to the domain's fields. Errors: VALIDATION_FAILED for an owner
// that gives both or neither of userId and name.
func (w Write) Fields() (risks.Fields, error) {
	f := risks.Fields{Title: w.Title, Description: w.Description, Category: w.Category,
		Likelihood: intPtr(w.Likelihood), Impact: intPtr(w.Impact), RiskScore: intPtr(w.RiskScore),
		ReviewDate: w.ReviewDate, ResidualLikelihood: intPtr(w.ResidualLikelihood),
		ResidualImpact: intPtr(w.ResidualImpact), Metadata: w.Metadata}
	if w.Treatment != nil {
		t := risks.Treatment(*w.Treatment)
		f.Treatment = &t
	}
	if w.ReviewEvery != nil {
		e := risks.Cadence(*w.ReviewEvery)
		f.ReviewEvery = &e
	}
	if w.Status != nil {
		s := risks.Status(*w.Status)
		f.Status = &s
	}
	if w.Owner != nil {
		if err := w.Owner.check(); err != nil {
			return f, err
		}
		f.Owner, f.OwnerUserID = w.Owner.parts()
	}
	return f, nil
}

// Owner is a risk's owner as the API shows it: one of the tenant's users (UserID,
// with their email as Name), or a name (UserID null).
type Owner struct {
	UserID *string `json:"userId"`
	Name   string  `json:"name"`
}

// OwnerWrite is an owner as a write gives it: exactly one of userId (a user of the
// tenant) and name.
type OwnerWrite struct {
	UserID *string `json:"userId"`
	Name   *string `json:"name"`
}

func (o OwnerWrite) check() error {
	switch {
	case o.UserID != nil && o.Name != nil:
		// What a read answers, sent back whole: the name is the user's email.
		return problem.Invalid("owner", `give one of userId and name, not both: a user owner is {"userId": …} alone, its name the user's email, which the server fills`)
	case o.UserID == nil && o.Name == nil:
		return problem.Invalid("owner", `give one of userId (one of the tenant's users) and name, e.g. {"name": "Ada"}`)
	}
	return nil
}

// parts are o's name (nil for a user owner: risks.FillOwner gives it) and user.
func (o OwnerWrite) parts() (*string, *string) {
	if o.UserID != nil {
		empty := ""
		return &empty, o.UserID
	}
	return o.Name, nil
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
	Owner       jsonbody.Optional[OwnerWrite]   `json:"owner"`
	Treatment   jsonbody.Optional[string]       `json:"treatment"`
	ReviewDate  jsonbody.Optional[string]       `json:"reviewDate"`
	ReviewEvery jsonbody.Optional[string]       `json:"reviewEvery"`
	// ResidualLikelihood, ResidualImpact: 1–5, null clears.
	ResidualLikelihood jsonbody.Optional[jsonbody.Int] `json:"residualLikelihood"`
	ResidualImpact     jsonbody.Optional[jsonbody.Int] `json:"residualImpact"`
	// Metadata is merged key by key; "" removes a key; null is refused.
	Metadata jsonbody.Optional[map[string]string] `json:"metadata"`
}

// Update converts p to a domain update. It also returns the name of a text field
// given as null ("" if none), which the caller must refuse. Errors: an owner as
// Write.Fields refuses it.
func (p Patch) Update() (risks.Update, string, error) {
	var u risks.Update
	texts := []struct {
		name string
		in   jsonbody.Optional[string]
		out  **string
	}{{"title", p.Title, &u.Title}, {"description", p.Description, &u.Description},
		{"category", p.Category, &u.Category}}
	for _, t := range texts {
		if t.in.Set {
			if t.in.Null {
				return u, t.name, nil
			}
			v := t.in.Value
			*t.out = &v
		}
	}
	if p.Owner.Set {
		if p.Owner.Null {
			return u, "owner", nil
		}
		if err := p.Owner.Value.check(); err != nil {
			return u, "", err
		}
		u.Owner, u.OwnerUserID = p.Owner.Value.parts()
	}
	if p.Status.Set {
		if p.Status.Null {
			return u, "status", nil
		}
		s := risks.Status(p.Status.Value)
		u.Status = &s
	}
	if p.Metadata.Set {
		if p.Metadata.Null {
			return u, "metadata", nil
		}
		u.Metadata = p.Metadata.Value
		if u.Metadata == nil {
			u.Metadata = map[string]string{}
		}
	}
	u.Likelihood = nullable(p.Likelihood)
	u.Impact = nullable(p.Impact)
	u.RiskScore = nullable(p.RiskScore)
	u.ResidualLikelihood = nullable(p.ResidualLikelihood)
	u.ResidualImpact = nullable(p.ResidualImpact)
	if p.Treatment.Set {
		u.Treatment = &risks.Nullable[risks.Treatment]{Value: risks.Treatment(p.Treatment.Value), Null: p.Treatment.Null}
	}
	if p.ReviewDate.Set {
		u.ReviewDate = &risks.Nullable[string]{Value: p.ReviewDate.Value, Null: p.ReviewDate.Null}
	}
	if p.ReviewEvery.Set {
		u.ReviewEvery = &risks.Nullable[risks.Cadence]{Value: risks.Cadence(p.ReviewEvery.Value), Null: p.ReviewEvery.Null}
	}
	return u, "", nil
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

// Resource implements changes.View.
func (Risk) Resource() string { return "risk" }
