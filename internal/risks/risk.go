// Package risks is the risk register's domain: the Risk type, its validation and
// derivation rules, and the Store interface its storage must satisfy. It knows nothing
// of HTTP, SQL or idempotency.
package risks

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/riskapi/riskapi/internal/problem"
)

// Status is where a risk stands.
type Status string

// The statuses a risk can have; StatusOpen is the default.
const (
	StatusOpen      Status = "open"
	StatusMitigated Status = "mitigated"
	StatusClosed    Status = "closed"
)

// Valid reports whether s is one of the three statuses.
func (s Status) Valid() bool {
	return s == StatusOpen || s == StatusMitigated || s == StatusClosed
}

// Risk is one entry of a tenant's risk register.
type Risk struct {
	ID          string
	TenantID    string
	Title       string // 1–200 characters
	Description string // up to 10,000 characters
	Category    string // up to 100 characters
	Likelihood  *int   // 1–5, nil when not assessed
	Impact      *int   // 1–5, nil when not assessed
	RiskScore   *int   // 1–25; derived as Likelihood×Impact when not given
	Status      Status
	// Owner is the owner's name as shown: for a user owner, the user's email.
	Owner string // up to 200 characters
	// OwnerUserID is the tenant's user who owns the risk; nil for a name owner.
	OwnerUserID *string
	ExternalID  *string // set by inbound webhooks and imports: the sender's finding ID
	Treatment   *Treatment
	ReviewDate  *string // YYYY-MM-DD, nil when none
	// ReviewEvery is the review cadence; nil when the risk has none.
	ReviewEvery *Cadence
	// ResidualLikelihood and ResidualImpact are the assessment after treatment,
	// 1–5 or nil; ResidualScore is always their product (nil unless both are set).
	ResidualLikelihood *int
	ResidualImpact     *int
	ResidualScore      *int
	// Metadata is the client's own key-value pairs (Stripe's rules, ValidateMetadata);
	// nil when there are none, never an empty map.
	Metadata map[string]string
	// Version is 1 at creation and one more for each change that alters a stored
	// field (Service.Update); the ETag, and what If-Match compares.
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ErrNotFound means no risk with that ID in that tenant; another tenant's risk is
// indistinguishable from an absent one.
var ErrNotFound = errors.New("risk not found")

// Fields are the client-writable fields of a risk, as given to create or replace it.
// nil means "not given".
type Fields struct {
	Title       *string
	Description *string
	Category    *string
	Likelihood  *int
	Impact      *int
	RiskScore   *int
	Status      *Status
	// Owner is the owner's name; with OwnerUserID, the user's email (Owners fills it).
	Owner *string
	// OwnerUserID is a user owner's ID, nil for a name owner; read only with Owner.
	OwnerUserID *string
	Treatment   *Treatment
	ReviewDate  *string
	ReviewEvery *Cadence
	// ResidualLikelihood, ResidualImpact: 1–5.
	ResidualLikelihood *int
	ResidualImpact     *int
	// Metadata: a value of "" is no key.
	Metadata map[string]string
}

// Nullable is a PATCH value that may be given as null to clear the field.
type Nullable[T any] struct {
	Value T
	Null  bool
}

// Update is a partial change (PATCH): nil fields are kept, others replaced; a Null
// Nullable clears an optional number.
type Update struct {
	Title       *string
	Description *string
	Category    *string
	Likelihood  *Nullable[int]
	Impact      *Nullable[int]
	RiskScore   *Nullable[int]
	Status      *Status
	// Owner, when given, replaces the owner: a name, or with OwnerUserID a user's
	// email (Owners fills it); OwnerUserID nil makes it a name owner.
	Owner       *string
	OwnerUserID *string
	Treatment   *Nullable[Treatment]
	ReviewDate  *Nullable[string]
	ReviewEvery *Nullable[Cadence]
	// ResidualLikelihood, ResidualImpact: 1–5, or Null to clear.
	ResidualLikelihood *Nullable[int]
	ResidualImpact     *Nullable[int]
	// Metadata is merged key by key; a key set to "" is removed. nil keeps it all.
	Metadata map[string]string
}

// Fields returns u as the fields of a new risk (an inbound webhook's finding that
// creates one): a cleared number is simply not given.
func (u Update) Fields() Fields {
	num := func(n *Nullable[int]) *int {
		if n == nil || n.Null {
			return nil
		}
		v := n.Value
		return &v
	}
	return Fields{Title: u.Title, Description: u.Description, Category: u.Category,
		Likelihood: num(u.Likelihood), Impact: num(u.Impact), RiskScore: num(u.RiskScore),
		Status: u.Status, Owner: u.Owner, OwnerUserID: u.OwnerUserID, Treatment: value(u.Treatment), ReviewDate: value(u.ReviewDate),
		ReviewEvery:        value(u.ReviewEvery),
		ResidualLikelihood: num(u.ResidualLikelihood), ResidualImpact: num(u.ResidualImpact),
		Metadata: mergeMetadata(nil, u.Metadata)}
}

// value is n's value, or nil when n is not given or null.
func value[T any](n *Nullable[T]) *T {
	if n == nil || n.Null {
		return nil
	}
	v := n.Value
	return &v
}

// New validates f and returns a risk for tenantID with id, timestamps at now, status
// open unless given, and a derived score. Errors: *problem.Problem VALIDATION_FAILED
// naming every offending field.
func New(id, tenantID string, f Fields, now time.Time) (*Risk, error) {
	r := &Risk{ID: id, TenantID: tenantID, Status: StatusOpen, Version: 1, CreatedAt: now, UpdatedAt: now}
	if err := r.assign(f); err != nil {
		return nil, err
	}
	return r, nil
}

// Replace overwrites every client-writable field of r with f (PUT): fields not given
// take their defaults. Errors as New.
func (r *Risk) Replace(f Fields, now time.Time) error {
	next := &Risk{ID: r.ID, TenantID: r.TenantID, ExternalID: r.ExternalID, Status: StatusOpen,
		Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: now}
	if err := next.assign(f); err != nil {
		return err
	}
	*r = *next
	return nil
}

// Apply changes the fields u gives (PATCH). When likelihood or impact changes and the
// score is not given, the score is derived again if both are set. Errors as New;
// on error r is unchanged.
func (r *Risk) Apply(u Update, now time.Time) error {
	next := *r
	if u.Title != nil {
		next.Title = *u.Title
	}
	if u.Description != nil {
		next.Description = *u.Description
	}
	if u.Category != nil {
		next.Category = *u.Category
	}
	if u.Owner != nil {
		next.Owner, next.OwnerUserID = *u.Owner, u.OwnerUserID
	}
	if u.Status != nil {
		next.Status = *u.Status
	}
	set(&next.Likelihood, u.Likelihood)
	set(&next.Impact, u.Impact)
	set(&next.RiskScore, u.RiskScore)
	set(&next.Treatment, u.Treatment)
	set(&next.ReviewDate, u.ReviewDate)
	set(&next.ReviewEvery, u.ReviewEvery)
	set(&next.ResidualLikelihood, u.ResidualLikelihood)
	set(&next.ResidualImpact, u.ResidualImpact)
	next.Metadata = mergeMetadata(r.Metadata, u.Metadata)
	// The score stays true: likelihood × impact again, null while either is null.
	if u.RiskScore == nil && (u.Likelihood != nil || u.Impact != nil) {
		next.RiskScore = derivedScore(next.Likelihood, next.Impact)
	}
	next.ResidualScore = derivedScore(next.ResidualLikelihood, next.ResidualImpact)
	// A field the change leaves as stored is not judged again: a value stored before
	// a rule existed (a 1899 review date, a control character in a title) must not
	// make every later change of other fields, a review or an acceptance's expiry
	// fail on it (docs/register.md).
	errs := slices.DeleteFunc(next.fieldErrors(), func(e problem.FieldError) bool { return sameField(e.Field, r, &next) })
	if p := problem.Fields(errs); p != nil {
		return p
	}
	next.UpdatedAt = now
	*r = next
	return nil
}

// sameField reports whether a and b hold the same value of the field a field error
// names (fieldErrors' names).
func sameField(field string, a, b *Risk) bool {
	switch field {
	case "title":
		return a.Title == b.Title
	case "description":
		return a.Description == b.Description
	case "category":
		return a.Category == b.Category
	case "owner":
		return a.Owner == b.Owner
	case "status":
		return a.Status == b.Status
	case "likelihood":
		return reflect.DeepEqual(a.Likelihood, b.Likelihood)
	case "impact":
		return reflect.DeepEqual(a.Impact, b.Impact)
	case "riskScore":
		return reflect.DeepEqual(a.RiskScore, b.RiskScore)
	case "residualLikelihood":
		return reflect.DeepEqual(a.ResidualLikelihood, b.ResidualLikelihood)
	case "residualImpact":
		return reflect.DeepEqual(a.ResidualImpact, b.ResidualImpact)
	case "treatment":
		return reflect.DeepEqual(a.Treatment, b.Treatment)
	case "reviewDate":
		return reflect.DeepEqual(a.ReviewDate, b.ReviewDate)
	case "reviewEvery":
		return reflect.DeepEqual(a.ReviewEvery, b.ReviewEvery)
	case "metadata":
		return reflect.DeepEqual(a.Metadata, b.Metadata)
	}
	return false
}

// set replaces *dst with n's value when n is given: nil when n is Null.
func set[T any](dst **T, n *Nullable[T]) {
	if n != nil {
		*dst = value(n)
	}
}

// sameAs reports whether r and o store the same values, UpdatedAt aside: a change
// that alters nothing else is no change (docs/events.md). Every field counts, so a
// field added to Risk is compared without being listed here.
func (r *Risk) sameAs(o *Risk) bool {
	a, b := *r, *o
	a.UpdatedAt, b.UpdatedAt = time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}

func (r *Risk) assign(f Fields) error {
	if f.Title != nil {
		r.Title = *f.Title
	} else {
		r.Title = ""
	}
	r.Description = deref(f.Description)
	r.Category = deref(f.Category)
	r.Owner, r.OwnerUserID = deref(f.Owner), nil
	if f.Owner != nil {
		r.OwnerUserID = f.OwnerUserID
	}
	r.Likelihood, r.Impact, r.RiskScore = f.Likelihood, f.Impact, f.RiskScore
	r.Treatment, r.ReviewDate, r.ReviewEvery = f.Treatment, f.ReviewDate, f.ReviewEvery
	r.ResidualLikelihood, r.ResidualImpact = f.ResidualLikelihood, f.ResidualImpact
	r.ResidualScore = derivedScore(r.ResidualLikelihood, r.ResidualImpact)
	r.Metadata = mergeMetadata(nil, f.Metadata)
	if f.Status != nil {
		r.Status = *f.Status
	}
	if r.RiskScore == nil {
		r.RiskScore = derivedScore(r.Likelihood, r.Impact)
	}
	errs := r.fieldErrors()
	if f.Title == nil {
		// Named with every other fault, not alone (docs/errors.md): the length check's
		// complaint about the empty title it stands for would say less.
		errs = append([]problem.FieldError{{Field: "title", Detail: "is required"}}, slices.DeleteFunc(errs, func(e problem.FieldError) bool { return e.Field == "title" })...)
	}
	if p := problem.Fields(errs); p != nil {
		return p
	}
	return nil
}

// fieldErrors lists every stored field out of its bounds, one error each.
func (r *Risk) fieldErrors() []problem.FieldError {
	var errs []problem.FieldError
	bad := func(field, detail string) { errs = append(errs, problem.FieldError{Field: field, Detail: detail}) }
	if n := utf8.RuneCountInString(r.Title); n < 1 || n > 200 {
		bad("title", "must be 1–200 characters")
	} else if blank(r.Title) {
		bad("title", "must not be blank")
	} else if d := TextDetail(r.Title, false); d != "" {
		bad("title", d)
	}
	if utf8.RuneCountInString(r.Description) > 10000 {
		bad("description", "must be at most 10000 characters")
	} else if d := TextDetail(r.Description, true); d != "" {
		bad("description", d)
	}
	if utf8.RuneCountInString(r.Category) > 100 {
		bad("category", "must be at most 100 characters")
	} else if d := TextDetail(r.Category, false); d != "" {
		bad("category", d)
	}
	if utf8.RuneCountInString(r.Owner) > 200 {
		bad("owner", "must be at most 200 characters")
	} else if d := TextDetail(r.Owner, false); d != "" {
		bad("owner", d)
	}
	inRange := func(field string, v *int, lo, hi int) {
		if v != nil && (*v < lo || *v > hi) {
			bad(field, fmt.Sprintf("must be an integer from %d to %d, or null", lo, hi))
		}
	}
	inRange("likelihood", r.Likelihood, 1, 5)
	inRange("impact", r.Impact, 1, 5)
	inRange("riskScore", r.RiskScore, 1, 25)
	if !r.Status.Valid() {
		bad("status", "must be one of open, mitigated, closed")
	}
	inRange("residualLikelihood", r.ResidualLikelihood, 1, 5)
	inRange("residualImpact", r.ResidualImpact, 1, 5)
	if r.Treatment != nil && !r.Treatment.Valid() {
		bad("treatment", "must be one of accept, mitigate, transfer, avoid, or null")
	}
	if r.ReviewDate != nil {
		if d := DateDetail(*r.ReviewDate, true); d != "" {
			bad("reviewDate", d)
		}
	}
	if r.ReviewEvery != nil && !r.ReviewEvery.Valid() {
		bad("reviewEvery", "must be one of P1M, P3M, P6M, P1Y, or null")
	}
	if d := ValidateMetadata(r.Metadata); d != "" {
		bad("metadata", d)
	}
	return errs
}

// derivedScore is likelihood × impact, or nil unless both are set and in range: a
// bad likelihood is reported as itself, never also as a score the client did not
// send.
func derivedScore(likelihood, impact *int) *int {
	ok := func(v *int) bool { return v != nil && *v >= 1 && *v <= 5 }
	if !ok(likelihood) || !ok(impact) {
		return nil
	}
	s := *likelihood * *impact
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Store persists risks. Every method is scoped to a tenant and writes through the
// transaction its context carries, if any (see internal/database.Conn). Every write
// records its change (ActionCreated, ActionUpdated, ActionDeleted) at the recording
// point, in the write's unit of work (internal/changes).
type Store interface {
	// Create inserts r.
	Create(ctx context.Context, r *Risk) error
	// CreateMany inserts rs, each as Create would (recorded), in one unit of work
	// and fewer statements: an import's new risks.
	CreateMany(ctx context.Context, rs []*Risk) error
	// Get returns the tenant's risk with id, or ErrNotFound.
	Get(ctx context.Context, tenantID, id string) (*Risk, error)
	// GetForUpdate is Get that also locks the risk's row until the transaction ctx
	// carries ends, so a read-modify-write in that transaction cannot lose another's
	// change (SELECT … FOR UPDATE on PostgreSQL; a SQLite transaction already holds the
	// database's only write lock). Outside a transaction it is Get.
	GetForUpdate(ctx context.Context, tenantID, id string) (*Risk, error)
	// GetByExternalID returns the tenant's risk with that external ID, or ErrNotFound.
	GetByExternalID(ctx context.Context, tenantID, externalID string) (*Risk, error)
	// GetByExternalIDs returns the tenant's risks with any of externalIDs, keyed by
	// external ID; IDs no risk has are absent.
	GetByExternalIDs(ctx context.Context, tenantID string, externalIDs []string) (map[string]*Risk, error)
	// GetByIDs returns the tenant's risks with any of ids, keyed by ID; IDs no risk
	// of the tenant has are absent.
	GetByIDs(ctx context.Context, tenantID string, ids []string) (map[string]*Risk, error)
	// List returns up to f.Limit of the risks f.Query selects, in its order, past
	// f.After, and whether more follow.
	List(ctx context.Context, tenantID string, f Filter) ([]*Risk, bool, error)
	// Heatmap counts the risks q selects (its sort aside) by likelihood and impact of
	// basis.
	Heatmap(ctx context.Context, tenantID string, q Query, basis Basis) (*Heatmap, error)
	// Factors returns the basis' factors of the risks among ids that q selects.
	Factors(ctx context.Context, tenantID string, q Query, basis Basis, ids []string) (map[string]Now, error)
	// Update stores every field of after, the change of before (the risk as stored,
	// read in the same unit of work), only over before's version. Errors:
	// ErrVersionChanged when the stored version is another, ErrNotFound.
	Update(ctx context.Context, before, after *Risk) error
	// Delete removes r (as stored, read in the same unit of work), only at r's
	// version. Errors: ErrVersionChanged, ErrNotFound.
	Delete(ctx context.Context, r *Risk) error
}

// blank is true for a title of only white space and invisible format characters
// (Unicode category Cf: U+200B ZERO WIDTH SPACE, U+2060, U+FEFF…), which would
// list as a link nobody can see or click.
// TextDetail says why s may not be stored as text shown to people ("" when it may),
// in the words of a field error: control characters (Unicode Cc: C0, DEL, C1)
// break a line or a terminal that shows the register, and the bidirectional
// embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) make text read
// otherwise than it is stored (CVE-2021-42574, "Trojan Source"). multiline lets a
// description keep its line breaks and tabs. The marks U+200E and U+200F, which
// right-to-left text needs, are kept.
func TextDetail(s string, multiline bool) string {
	for _, r := range s {
		switch {
		case multiline && (r == '\n' || r == '\r' || r == '\t'):
		case unicode.Is(unicode.Cc, r):
			return fmt.Sprintf("must not contain the control character U+%04X", r)
		case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
			return fmt.Sprintf("must not contain the bidirectional formatting character U+%04X", r)
		}
	}
	return ""
}

func blank(s string) bool {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) }) == ""
}

// Owners finds the tenant's users that own risks.
type Owners interface {
	// UserEmail returns the email of the tenant's user userID. Errors:
	// ErrOwnerUnknown when the tenant has no such user.
	UserEmail(ctx context.Context, tenantID, userID string) (string, error)
}

// ErrOwnerUnknown means a user owner names no user of the tenant.
var ErrOwnerUnknown = problem.New(problem.OwnerUserUnknown, "owner: userId is no user of this tenant")

// FillOwner gives a user owner (userID set) its name, the user's email, in *name.
// Nothing to do for a name owner. Errors: ErrOwnerUnknown; owners'.
func FillOwner(ctx context.Context, owners Owners, tenantID string, name **string, userID *string) error {
	if userID == nil {
		return nil
	}
	if owners == nil {
		return ErrOwnerUnknown
	}
	email, err := owners.UserEmail(ctx, tenantID, *userID)
	if err != nil {
		return err
	}
	*name = &email
	return nil
}
