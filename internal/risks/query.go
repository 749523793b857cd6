package risks

import "time"

// Query selects and orders a tenant's risks: the filters of a list, heat map or
// export (docs/register.md). A risk is selected when every given filter holds;
// nil and empty filters are not given.
type Query struct {
	Statuses   []Status
	Treatments []Treatment
	Category   *string // the whole value, in any letter case
	Owner      *string // the whole value, in any letter case ("" selects risks without an owner)
	// OwnerUserID is a user owner's ID, exact (ownerId=).
	OwnerUserID *string
	// MinScore, MaxScore bound riskScore, inclusive; a risk without a score fails both.
	MinScore, MaxScore *int
	// Likelihoods, Impacts, ResidualLikelihoods, ResidualImpacts select risks whose
	// factor is one of the values (1–5): a heat-map cell's list is a filter like any
	// other, so it pages. A risk without the factor fails them.
	Likelihoods, Impacts, ResidualLikelihoods, ResidualImpacts []int
	// ReviewBefore selects risks whose reviewDate (YYYY-MM-DD) is earlier.
	ReviewBefore *string
	// CreatedSince ≤ createdAt < CreatedUntil; UpdatedSince ≤ updatedAt.
	CreatedSince, CreatedUntil, UpdatedSince *time.Time
	// Words must each occur, case-insensitive, in the title or the description.
	Words []string
	// Metadata: each key's value must equal the given one.
	Metadata map[string]string
	// OutsideAppetite, when true, selects the risks whose riskScore is above their
	// category's appetite, else the tenant's; when false, every other risk
	// (docs/register.md, Appetite).
	OutsideAppetite *bool
	Sort            Sort
}

// SortField is a field a list can be ordered by.
type SortField string

// The fields a list can be ordered by.
const (
	SortCreatedAt  SortField = "createdAt"
	SortUpdatedAt  SortField = "updatedAt"
	SortRiskScore  SortField = "riskScore"
	SortTitle      SortField = "title"
	SortReviewDate SortField = "reviewDate"
	// SortResidualScore orders by residualScore, the score left after treatment.
	SortResidualScore SortField = "residualScore"
)

// SortFields lists every SortField.
var SortFields = []SortField{SortCreatedAt, SortUpdatedAt, SortRiskScore, SortTitle, SortReviewDate, SortResidualScore}

// Sort is an order: by Field, descending when Desc, ties by id in the same
// direction; risks without a value (riskScore, reviewDate, residualScore) come
// last either way.
type Sort struct {
	Field SortField
	Desc  bool
}

// DefaultSort is newest first.
var DefaultSort = Sort{Field: SortCreatedAt, Desc: true}

// Key returns r's value of s's field, as the cursor after r holds it: an int, a
// string or a time.Time; nil when r has none.
func (s Sort) Key(r *Risk) any {
	switch s.Field {
	case SortUpdatedAt:
		return r.UpdatedAt
	case SortRiskScore:
		if r.RiskScore == nil {
			return nil
		}
		return *r.RiskScore
	case SortResidualScore:
		if r.ResidualScore == nil {
			return nil
		}
		return *r.ResidualScore
	case SortTitle:
		return r.Title
	case SortReviewDate:
		if r.ReviewDate == nil {
			return nil
		}
		return *r.ReviewDate
	default:
		return r.CreatedAt
	}
}

// Mark is where a page starts: after the risk with this sort key and ID.
type Mark struct {
	Key any // as Sort.Key returns it
	ID  string
}

// Filter is one page of a Query.
type Filter struct {
	Query
	// Limit is the page size.
	Limit int
	// After, when set, is the last risk of the previous page.
	After *Mark
}

// Basis is which assessment a heat map counts.
type Basis string

// The two bases of a heat map.
const (
	BasisInherent Basis = "inherent" // likelihood × impact
	BasisResidual Basis = "residual" // residualLikelihood × residualImpact
)

// Heatmap counts risks by likelihood and impact: Counts[l-1][i-1] risks have
// likelihood l and impact i; Unassessed lack one or both.
type Heatmap struct {
	Counts     [5][5]int
	Unassessed int
}

// Counted reports whether the heat map's counts answer a heat map of q
// (docs/register.md): q filters on nothing but statuses, treatments and the four
// factors, all kept by the counts (its sort does not matter to a count). Any other
// heat map counts the selected risks one by one: a costly read.
func (q Query) Counted() bool {
	return q.Category == nil && q.Owner == nil && q.OwnerUserID == nil && q.MinScore == nil && q.MaxScore == nil &&
		q.ReviewBefore == nil && q.CreatedSince == nil && q.CreatedUntil == nil && q.UpdatedSince == nil &&
		len(q.Words) == 0 && len(q.Metadata) == 0 && q.OutsideAppetite == nil
}

// Costly reports whether a page of q is a costly read (docs/register.md, "Costly
// reads"): one whose cost grows with the tenant's risks rather than the page's,
// because no index answers it — a search (Words), a filter checked row by row on
// the sort's index walk (Category, Owner, Metadata), or a range filter whose index
// is not the sort's (MinScore or MaxScore but by riskScore, ReviewBefore but by
// reviewDate, CreatedSince or CreatedUntil but by createdAt, UpdatedSince but by
// updatedAt), any of which may walk every risk of the tenant to fill a page that
// few risks match. Statuses, treatments and factors are not: at most a dozen values,
// a page of them is reached within a few hundred rows.
func (q Query) Costly() bool {
	if len(q.Words) > 0 || q.Category != nil || q.Owner != nil || q.OwnerUserID != nil || len(q.Metadata) > 0 ||
		q.OutsideAppetite != nil {
		return true
	}
	off := func(f SortField, set bool) bool { return set && q.Sort.Field != f }
	return off(SortRiskScore, q.MinScore != nil || q.MaxScore != nil) ||
		off(SortReviewDate, q.ReviewBefore != nil) ||
		off(SortCreatedAt, q.CreatedSince != nil || q.CreatedUntil != nil) ||
		off(SortUpdatedAt, q.UpdatedSince != nil)
}
