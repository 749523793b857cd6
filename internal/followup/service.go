package followup

import (
	"context"
	"encoding/json"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
)

// UnitOfWork runs fn as one transaction (internal/database.Runner).
type UnitOfWork interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Service is followup's writes, each one unit of work.
type Service struct {
	Store Store // required
	Risks Risks // required: a review moves reviewDate, a decision the treatment
	// RiskStore reads risks (the lists of a risk's reviews, actions, acceptances
	// answer 404 for a risk that is not the tenant's). Required.
	RiskStore RiskReader
	Users     Users      // required: an action's owner is a user of the tenant
	Tx        UnitOfWork // required
	// Snapshot is a risk's public JSON (riskview), kept with a decision. Required.
	Snapshot func(*risks.Risk) any
	// Now is the clock. Optional. Default time.Now.
	Now func() time.Time
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC().Truncate(time.Microsecond)
	}
	return time.Now().UTC().Truncate(time.Microsecond)
}

// today is the day of now, UTC: the calendar every date of the register is on.
func today(now time.Time) time.Time {
	y, m, d := now.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// ReviewInput is the body of a review.
type ReviewInput struct {
	Note    string
	Outcome Outcome
}

// Review records a review of the tenant's risk by the actor ctx carries and moves
// the risk's reviewDate to today plus its reviewEvery (null when it has none: no
// review is scheduled), in one unit of work. Errors: VALIDATION_FAILED,
// risks.ErrNotFound, the store's.
func (s *Service) Review(ctx context.Context, tenantID, riskID string, in ReviewInput) (*Review, error) {
	var errs []problem.FieldError
	if utf8.RuneCountInString(in.Note) > 10000 {
		errs = append(errs, problem.FieldError{Field: "note", Detail: "must be at most 10000 characters"})
	} else if d := risks.TextDetail(in.Note, true); d != "" {
		errs = append(errs, problem.FieldError{Field: "note", Detail: d})
	}
	if in.Outcome != Unchanged && in.Outcome != Changed {
		errs = append(errs, problem.FieldError{Field: "outcome", Detail: "must be one of unchanged, changed"})
	}
	if p := problem.Fields(errs); p != nil {
		return nil, p
	}
	now := s.now()
	rv := &Review{ID: ids.New(ids.Review), TenantID: tenantID, RiskID: riskID, Note: in.Note,
		Outcome: in.Outcome, Reviewer: changes.ActorFrom(ctx), CreatedAt: now}
	err := s.Tx.InTx(ctx, func(ctx context.Context) error {
		_, err := s.Risks.Update(ctx, tenantID, riskID, nil, func(r *risks.Risk) error {
			var next *string
			if r.ReviewEvery != nil {
				d := r.ReviewEvery.After(today(now))
				next = &d
			}
			rv.NextReviewDate = next
			return r.Apply(risks.Update{ReviewDate: &risks.Nullable[string]{Value: deref(next), Null: next == nil}}, now)
		})
		if err != nil {
			return err
		}
		return s.Store.CreateReview(ctx, rv)
	})
	if err != nil {
		return nil, err
	}
	return rv, nil
}

// ActionInput is the body of an action's creation.
type ActionInput struct {
	Title   *string
	OwnerID *string
	DueDate *string
}

// CreateAction adds an open treatment action to the tenant's risk. Errors:
// VALIDATION_FAILED (an owner who is not a user of the tenant is named as ownerId),
// risks.ErrNotFound, the store's.
func (s *Service) CreateAction(ctx context.Context, tenantID, riskID string, in ActionInput) (*Action, error) {
	now := s.now()
	a := &Action{ID: ids.New(ids.Action), TenantID: tenantID, RiskID: riskID, Title: deref(in.Title),
		OwnerID: deref(in.OwnerID), DueDate: in.DueDate, Status: ActionOpen, Version: 1, CreatedAt: now, UpdatedAt: now}
	var errs []problem.FieldError
	if in.Title == nil {
		errs = append(errs, problem.FieldError{Field: "title", Detail: "is required"})
	}
	if in.OwnerID == nil {
		errs = append(errs, problem.FieldError{Field: "ownerId", Detail: "is required"})
	}
	if err := s.checkAction(ctx, a, nil, errs, true); err != nil {
		return nil, err
	}
	if err := s.Store.CreateAction(ctx, a); err != nil {
		return nil, err
	}
	return a, nil
}

// checkAction validates a, adding to errs, and, when checkOwner, checks its owner
// is the tenant's. A patch that does not name ownerId keeps the stored one
// unchecked: a deleted user leaves their actions with that ID (docs/register.md).
// Given before (a patch), a title or due date the patch leaves as stored is not
// judged again, so a value stored before a rule existed never blocks a change of
// the others.
func (s *Service) checkAction(ctx context.Context, a, before *Action, errs []problem.FieldError, checkOwner bool) error {
	bad := func(field, detail string) { errs = append(errs, problem.FieldError{Field: field, Detail: detail}) }
	keptTitle := before != nil && before.Title == a.Title
	if n := utf8.RuneCountInString(a.Title); (n < 1 || n > 200) && !named(errs, "title") && !keptTitle {
		bad("title", "must be 1–200 characters")
	} else if d := risks.TextDetail(a.Title, false); d != "" && !named(errs, "title") && !keptTitle {
		bad("title", d)
	}
	if a.DueDate != nil && (before == nil || before.DueDate == nil || *before.DueDate != *a.DueDate) {
		if d := risks.DateDetail(*a.DueDate, true); d != "" {
			bad("dueDate", d)
		}
	}
	if !a.Status.Valid() {
		bad("status", "must be one of open, done, cancelled")
	}
	if checkOwner && !named(errs, "ownerId") {
		ok := ids.Valid(ids.User, a.OwnerID)
		if ok {
			var err error
			if a.OwnerEmail, ok, err = s.Users.ActionOwner(ctx, a.TenantID, a.OwnerID); err != nil {
				return err
			}
		}
		if !ok {
			bad("ownerId", "must be the ID of a user of your tenant")
		}
	}
	if p := problem.Fields(errs); p != nil {
		return p
	}
	return nil
}

func named(errs []problem.FieldError, field string) bool {
	for _, e := range errs {
		if e.Field == field {
			return true
		}
	}
	return false
}

// ActionPatch is a partial change of an action; nil members are kept.
type ActionPatch struct {
	Title   *string
	OwnerID *string
	DueDate *risks.Nullable[string]
	Status  *ActionStatus
}

// UpdateAction changes the tenant's action id when ifMatch holds, version one more;
// a patch that changes nothing writes nothing. Errors: ErrActionNotFound,
// *StaleActionError, VALIDATION_FAILED, the store's.
func (s *Service) UpdateAction(ctx context.Context, tenantID, id string, ifMatch risks.IfMatch, p ActionPatch) (*Action, error) {
	var out *Action
	err := s.Tx.InTx(ctx, func(ctx context.Context) error {
		before, err := s.Store.ActionForUpdate(ctx, tenantID, id)
		if err != nil {
			return err
		}
		if !ifMatch.Holds(before.Version) {
			return &StaleActionError{Current: before}
		}
		after := *before
		if p.Title != nil {
			after.Title = *p.Title
		}
		if p.OwnerID != nil {
			after.OwnerID = *p.OwnerID
		}
		if p.DueDate != nil {
			after.DueDate = nil
			if !p.DueDate.Null {
				d := p.DueDate.Value
				after.DueDate = &d
			}
		}
		if p.Status != nil {
			after.Status = *p.Status
		}
		if err := s.checkAction(ctx, &after, before, nil, p.OwnerID != nil); err != nil {
			return err
		}
		if sameAction(before, &after) {
			out = before
			return nil
		}
		after.Version, after.UpdatedAt = before.Version+1, s.now()
		if err := s.Store.UpdateAction(ctx, before, &after); err != nil {
			return err
		}
		out = &after
		return nil
	})
	return out, err
}

func sameAction(a, b *Action) bool {
	return a.Title == b.Title && a.OwnerID == b.OwnerID && a.Status == b.Status && deref(a.DueDate) == deref(b.DueDate) &&
		(a.DueDate == nil) == (b.DueDate == nil)
}

// AcceptanceInput is the body of an acceptance request.
type AcceptanceInput struct {
	Justification *string
	ValidUntil    *string
}

// RequestAcceptance creates a pending acceptance of the tenant's risk, requested
// by the actor ctx carries. validUntil is after today and at most a year from it.
// Errors: VALIDATION_FAILED, risks.ErrNotFound, the store's.
func (s *Service) RequestAcceptance(ctx context.Context, tenantID, riskID string, in AcceptanceInput) (*Acceptance, error) {
	now := s.now()
	var errs []problem.FieldError
	if n := utf8.RuneCountInString(deref(in.Justification)); n < 1 || n > 10000 {
		errs = append(errs, problem.FieldError{Field: "justification", Detail: "is required: 1–10000 characters"})
	} else if d := risks.TextDetail(*in.Justification, true); d != "" {
		errs = append(errs, problem.FieldError{Field: "justification", Detail: d})
	}
	day := today(now)
	switch {
	case in.ValidUntil == nil:
		errs = append(errs, problem.FieldError{Field: "validUntil", Detail: "is required"})
	case risks.DateDetail(*in.ValidUntil, false) != "":
		errs = append(errs, problem.FieldError{Field: "validUntil", Detail: risks.DateDetail(*in.ValidUntil, false)})
	case *in.ValidUntil <= day.Format(risks.DateLayout) || *in.ValidUntil > day.AddDate(1, 0, 0).Format(risks.DateLayout):
		errs = append(errs, problem.FieldError{Field: "validUntil",
			Detail: "must be after today and at most one year from today (" + day.AddDate(1, 0, 0).Format(risks.DateLayout) + ")"})
	}
	if p := problem.Fields(errs); p != nil {
		return nil, p
	}
	a := &Acceptance{ID: ids.New(ids.Acceptance), TenantID: tenantID, RiskID: riskID, Justification: *in.Justification,
		ValidUntil: *in.ValidUntil, Status: AcceptancePending, RequestedBy: changes.ActorFrom(ctx), Version: 1,
		CreatedAt: now, UpdatedAt: now}
	if err := s.Store.CreateAcceptance(ctx, a); err != nil {
		return nil, err
	}
	return a, nil
}

// Decide approves (approve) or rejects the tenant's pending acceptance id as the
// actor ctx carries, with note, keeping a snapshot of the risk as it is at the
// decision; an approval sets the risk's treatment to accept. One unit of work.
// Errors: ErrAcceptanceNotFound, 403 SELF_APPROVAL for its requester, 409
// ACCEPTANCE_DECIDED when it is not pending, VALIDATION_FAILED, the store's.
func (s *Service) Decide(ctx context.Context, tenantID, id string, approve bool, note string) (*Acceptance, error) {
	if utf8.RuneCountInString(note) > 10000 {
		return nil, problem.Invalid("note", "must be at most 10000 characters")
	}
	if d := risks.TextDetail(note, true); d != "" {
		return nil, problem.Invalid("note", d)
	}
	actor := changes.ActorFrom(ctx)
	now := s.now()
	var out *Acceptance
	err := s.Tx.InTx(ctx, func(ctx context.Context) error {
		before, err := s.Store.AcceptanceForUpdate(ctx, tenantID, id)
		if err != nil {
			return err
		}
		if before.RequestedBy.Type == actor.Type && before.RequestedBy.ID == actor.ID {
			return problem.New(problem.SelfApproval, "you requested this acceptance: another admin of your tenant decides it")
		}
		if before.Status != AcceptancePending {
			return problem.New(problem.AcceptanceDecided, "this acceptance is %s, no longer pending", before.Status)
		}
		after := *before
		action := changes.AcceptanceRejected
		after.Status = AcceptanceRejected
		if approve {
			action, after.Status = changes.AcceptanceApproved, AcceptanceApproved
		}
		// The snapshot is the risk the decider decided on: as stored before the
		// approval's own change of its treatment.
		var seen risks.Risk
		_, err = s.Risks.Update(ctx, tenantID, before.RiskID, nil, func(r *risks.Risk) error {
			seen = *r
			if !approve {
				return nil
			}
			return r.Apply(risks.Update{Treatment: &risks.Nullable[risks.Treatment]{Value: risks.TreatmentAccept}}, now)
		})
		if err != nil {
			return err
		}
		snap, err := json.Marshal(s.Snapshot(&seen))
		if err != nil {
			return err
		}
		after.DecidedBy, after.DecisionNote, after.DecidedAt, after.RiskSnapshot = &actor, &note, &now, snap
		after.Version, after.UpdatedAt = before.Version+1, now
		if err := s.Store.UpdateAcceptance(ctx, action, before, &after); err != nil {
			return err
		}
		out = &after
		return nil
	})
	return out, err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ErrNotDue is Expire's report that the acceptance is no longer approved until
// validUntil (decided otherwise, or already expired): nothing was written.
var ErrNotDue = errors.New("acceptance is not approved until that date")

// Expire ends the tenant's approved acceptance id whose validUntil has passed: its
// status becomes expired, its event (acceptance.expired) takes eventID, and the
// risk's treatment, when still accept, becomes null (risk.updated). In the unit of
// work ctx carries (the due-date notice's). Errors: ErrNotDue,
// ErrAcceptanceNotFound, the store's.
func (s *Service) Expire(ctx context.Context, tenantID, id, validUntil, eventID string) error {
	return s.Tx.InTx(ctx, func(ctx context.Context) error {
		before, err := s.Store.AcceptanceForUpdate(ctx, tenantID, id)
		if err != nil {
			return err
		}
		if before.Status != AcceptanceApproved || before.ValidUntil != validUntil {
			return ErrNotDue
		}
		now := s.now()
		after := *before
		after.Status, after.Version, after.UpdatedAt = AcceptanceExpired, before.Version+1, now
		if err := s.Store.Expire(ctx, eventID, before, &after); err != nil {
			return err
		}
		_, err = s.Risks.Update(ctx, tenantID, before.RiskID, nil, func(r *risks.Risk) error {
			if r.Treatment == nil || *r.Treatment != risks.TreatmentAccept {
				return nil // treated otherwise since: that decision stands
			}
			return r.Apply(risks.Update{Treatment: &risks.Nullable[risks.Treatment]{Null: true}}, now)
		})
		if errors.Is(err, risks.ErrNotFound) {
			return nil
		}
		return err
	})
}

// MyWork returns the user's My work in the tenant's data (docs/register.md, My
// work): reviews due within reviewDueDays of today or overdue on risks they own,
// their open actions, and, for an admin, the acceptances others requested, at most
// limit of each; and today (YYYY-MM-DD, UTC), which tells a due review from an
// overdue one.
func (s *Service) MyWork(ctx context.Context, tenantID, userID string, admin bool, reviewDueDays, limit int) (*MyWork, string, error) {
	day := today(s.now())
	w, err := s.Store.MyWork(ctx, tenantID, MyWorkQuery{UserID: userID, Admin: admin,
		ReviewBy: day.AddDate(0, 0, reviewDueDays).Format(time.DateOnly), Limit: limit})
	return w, day.Format(time.DateOnly), err
}
