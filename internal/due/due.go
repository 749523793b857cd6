// Package due finds what has come due in the register — reviews, actions,
// acceptances (and any Kind added: api_key.expiring when keys expire) — and emits
// one notice event for each (kind, object, due date), exactly once whatever runs it:
// several instances, a restart, a crash mid-run or a second run (docs/register.md,
// Due dates). Each notice's event ID is derived from (kind, object, due date)
// (ids.Derived), and claimed in due_notices, insert-if-absent, in the same
// transaction as its event in the outbox: the claim commits with the event or
// neither does. A moved date is another (kind, object, due date): a new notice.
package due

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/logfield"
)

// DateLayout is how dates are written (YYYY-MM-DD).
const DateLayout = "2006-01-02"

// Item is one object that has come due.
type Item struct {
	TenantID string
	ObjectID string
	DueDate  string // the object's date the notice is about: YYYY-MM-DD
}

// Source is where a Kind's items are found: rows of Table whose DateColumn falls in
// the kind's window and that Where (SQL on the table's columns, may be "") keeps.
type Source struct {
	Table      string
	DateColumn string
	Where      string
	// Marked says Table's rows may carry a pending import's mark (risks): while
	// an import is pending the store leaves its rows out (database.PublishedSQL).
	Marked bool
	// Timestamp says DateColumn is a timestamp (stored in UTC: api_keys.expires_at)
	// rather than a YYYY-MM-DD date: its due date is its UTC day, which the store
	// writes in its dialect's SQL.
	Timestamp bool
}

// Kind is one kind of notice: its event type, where its items are, when they fall
// due, and what recording one means.
type Kind struct {
	// Action is the notice's action and event type (changes.Registry).
	Action changes.Action
	Source Source
	// Lead is how many days before the due date the notice falls due; -1 for the
	// day after it (overdue, expired).
	Lead int
	// Lookback, for a kind of Lead -1 whose items stay due once noticed (a review
	// still overdue, an action still open), is how many days past its date an item
	// is still looked for: RetentionDays, so that a notice the sweep removed is
	// never found missing, and a run does not read every item ever overdue. 0 for
	// no bound: a kind whose notice makes its item leave the source (an expired
	// acceptance is no longer approved).
	Lookback int
	// Notice records the notice of it, with its derived event ID, in the
	// transaction ctx carries (the claim's). It returns ErrMoved when the object no
	// longer has that due date (changed since it was found): nothing is emitted.
	Notice func(ctx context.Context, it Item, eventID string) error
}

// ErrMoved is a Notice's report that its object's date moved since it was found.
var ErrMoved = errors.New("due: the object's date moved since it was found")

// RetentionDays is how long a notice is kept in due_notices, counted from its due
// date: the sweep removes older ones (docs/register.md, Due dates). No kind looks
// for an item that far back, so none is noticed twice.
const RetentionDays = 180

// window is the range of due dates that have come due for k today: [from, to],
// from "" for no lower bound.
func (k Kind) window(today time.Time) (from, to string) {
	if k.Lead < 0 {
		if k.Lookback > 0 {
			from = today.AddDate(0, 0, -k.Lookback).Format(DateLayout)
		}
		return from, today.AddDate(0, 0, -1).Format(DateLayout)
	}
	return today.Format(DateLayout), today.AddDate(0, 0, k.Lead).Format(DateLayout)
}

// EventID is the ID of the notice of it: derived from (kind, object, due date), its
// time the moment the notice falls due (the due date less the lead, at 00:00 UTC),
// so that listed events stay near the order they fell due in.
func (k Kind) EventID(it Item) string {
	d, err := time.Parse(DateLayout, it.DueDate)
	if err != nil {
		d = time.Unix(0, 0)
	}
	return ids.Derived(ids.Event, d.AddDate(0, 0, -k.Lead), string(k.Action)+"|"+it.ObjectID+"|"+it.DueDate)
}

// Store finds items and claims notices.
type Store interface {
	// InTx runs fn in one transaction.
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
	// Find returns up to limit items of src whose due date is in [from, to] (from
	// "" for none) and that have no notice of kind yet, at most perTenant of any
	// one tenant, earliest due first.
	Find(ctx context.Context, kind changes.Action, src Source, from, to string, limit, perTenant int) ([]Item, error)
	// Claim inserts the notice id of (kind, it) unless one exists, in the
	// transaction ctx carries, and reports whether it did.
	Claim(ctx context.Context, id string, kind changes.Action, it Item, now time.Time) (bool, error)
}

// Finder runs the kinds: each run finds what has come due and notices it.
type Finder struct {
	Kinds []Kind // the kinds, in the order they run
	Store Store  // required
	// Batch is how many items a query returns (default 200); PerTenant how many of
	// them one tenant may take (default 50); Batches how many batches of each kind
	// a run takes at most (default 10): a tenant with many due items cannot hold the
	// schedule, and what a run leaves waits for the next.
	Batch, PerTenant, Batches int
	Now                       func() time.Time // optional, default time.Now
	Logger                    *slog.Logger     // optional, default slog.Default()
}

// Run finds and notices what has come due and returns how many notices it emitted.
// A kind's failure is logged and the other kinds still run; the first error is
// returned.
func (f *Finder) Run(ctx context.Context) (int, error) {
	start := time.Now()
	now := time.Now
	if f.Now != nil {
		now = f.Now
	}
	y, m, d := now().UTC().Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	total := 0
	var first error
	for _, k := range f.Kinds {
		n, err := f.runKind(ctx, k, today, now)
		total += n
		if err != nil {
			attrs := []any{slog.String("kind", string(k.Action)), slog.String("error", err.Error())}
			// The item a notice failed on, so an operator can find the row that keeps failing.
			var ne *noticeError
			if errors.As(err, &ne) {
				attrs = append(attrs, slog.String("tenant_id", ne.item.TenantID), slog.String("object_id", ne.item.ObjectID),
					slog.String("due_date", ne.item.DueDate))
			}
			f.logger().ErrorContext(ctx, "due-date notices failed", attrs...)
			if first == nil {
				first = err
			}
		}
	}
	if total > 0 {
		f.logger().InfoContext(ctx, "due-date notices emitted", slog.Int("count", total), logfield.Duration(time.Since(start)))
	}
	return total, first
}

func (f *Finder) runKind(ctx context.Context, k Kind, today time.Time, now func() time.Time) (int, error) {
	from, to := k.window(today)
	batch, per, batches := or(f.Batch, 200), or(f.PerTenant, 50), or(f.Batches, 10)
	n := 0
	for range batches {
		items, err := f.Store.Find(ctx, k.Action, k.Source, from, to, batch, per)
		if err != nil {
			return n, err
		}
		for _, it := range items {
			ok, err := f.notice(ctx, k, it, now)
			if err != nil {
				return n, &noticeError{item: it, err: err}
			}
			if ok {
				n++
			}
		}
		// Less than a batch is not the end: PerTenant may have cut one tenant's
		// share; the next query starts past what this one claimed.
		if len(items) == 0 {
			break
		}
	}
	return n, nil
}

// noticeError is a notice that failed, with the item it was for (Run logs its ids).
type noticeError struct {
	item Item
	err  error
}

func (e *noticeError) Error() string { return e.err.Error() }
func (e *noticeError) Unwrap() error { return e.err }

// errClaimed rolls back a notice another run claimed first.
var errClaimed = errors.New("due: claimed by another run")

// notice claims it and records its notice in one transaction, and reports whether
// it did: false when another run has it, or its date moved.
func (f *Finder) notice(ctx context.Context, k Kind, it Item, now func() time.Time) (bool, error) {
	id := k.EventID(it)
	err := f.Store.InTx(ctx, func(ctx context.Context) error {
		ok, err := f.Store.Claim(ctx, id, k.Action, it, now().UTC())
		if err != nil {
			return err
		}
		if !ok {
			return errClaimed
		}
		return k.Notice(changes.WithActor(ctx, changes.Actor{Type: changes.ActorSystem}), it, id)
	})
	switch {
	case errors.Is(err, errClaimed), errors.Is(err, ErrMoved):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

func (f *Finder) logger() *slog.Logger {
	if f.Logger != nil {
		return f.Logger
	}
	return slog.Default()
}

func or(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}
