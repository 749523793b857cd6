package risks

import (
	"context"
	"errors"
	"log/slog"
)

// UnitOfWork runs fn as one transaction: the one a keyed request's reservation holds
// when ctx carries it, else a new one committed when fn returns nil and rolled back
// otherwise. fn must write through the context it is given. internal/database.Runner
// implements it.
type UnitOfWork interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Dependent is data that belongs to a risk and goes with it (attachment rows).
type Dependent interface {
	// DeleteByRisk removes the tenant's rows of riskID and returns how many.
	DeleteByRisk(ctx context.Context, tenantID, riskID string) (int, error)
}

// Service is the risk register's writes, each one unit of work whatever the request
// carries: a write is never one transaction with an Idempotency-Key and several
// without. Reads go to Store directly.
type Service struct {
	// Store persists risks. Required.
	Store Store
	// Tx runs writes of more than one statement. Required.
	Tx UnitOfWork
	// Dependents are deleted with a risk, in the same unit of work (riskapi:
	// attachment rows; their bytes are left to attachments.OrphanSweeper).
	Dependents []Dependent
	// Owners finds the users a user owner names (FillOwner). Optional: without it
	// every userId is refused as no user of the tenant.
	Owners Owners
	// Holds keeps a tenant to one import at a time (Import). Optional: without it
	// imports of a tenant may run at once.
	Holds Holds
	// Logger logs what an import's settlement after its request could not do
	// (Import). Optional: slog.Default().
	Logger *slog.Logger
}

// Create inserts r. One statement: atomic without a transaction of its own.
func (s *Service) Create(ctx context.Context, r *Risk) error { return s.Store.Create(ctx, r) }

// Update reads the tenant's risk id, checks ifMatch against its version, lets
// change modify it, and stores it with its version one more, in one unit of work. It
// returns the stored risk. A change that alters no stored field writes nothing,
// records nothing and keeps the version (the risk is returned as it was).
//
// Of any number of concurrent updates with the same ifMatch, one applies and the
// others find the version it wrote: the read locks the row (GetForUpdate) and the
// store writes only over the version read.
//
// Errors: ErrNotFound; *StaleError when ifMatch does not hold (nothing is written);
// change's error (nothing is written); the store's.
func (s *Service) Update(ctx context.Context, tenantID, id string, ifMatch IfMatch, change func(*Risk) error) (*Risk, error) {
	var out *Risk
	err := s.Tx.InTx(ctx, func(ctx context.Context) error {
		before, err := s.current(ctx, tenantID, id, ifMatch)
		if err != nil {
			return err
		}
		after := *before
		if err := change(&after); err != nil {
			return err
		}
		if after.sameAs(before) {
			out = before
			return nil
		}
		after.Version = before.Version + 1
		if err := s.Store.Update(ctx, before, &after); err != nil {
			return s.stale(ctx, tenantID, id, err)
		}
		out = &after
		return nil
	})
	return out, err
}

// disownBatch is how many of a deleted user's risks DisownUser reads at a time.
const disownBatch = 200

// DisownUser makes each of the tenant's risks that userID owns a name owner named
// email (the name a user owner already shows), each an update like any other: its
// version moves and it records risk.updated, with the actor ctx carries. Run in the
// transaction that deletes the user (tenants.Service.UserDeleted), so that no risk
// is left naming a user who is gone — an export of it would not import again, and
// a PUT of it as read would be refused (docs/register.md, Owners). It returns how
// many risks it changed.
func (s *Service) DisownUser(ctx context.Context, tenantID, userID, email string) (int, error) {
	n := 0
	err := s.Tx.InTx(ctx, func(ctx context.Context) error {
		uid := userID
		for {
			owned, _, err := s.Store.List(ctx, tenantID, Filter{Query: Query{OwnerUserID: &uid}, Limit: disownBatch})
			if err != nil {
				return err
			}
			if len(owned) == 0 {
				return nil
			}
			for _, r := range owned {
				if _, err := s.Update(ctx, tenantID, r.ID, nil, func(r *Risk) error {
					r.Owner, r.OwnerUserID = email, nil
					return nil
				}); err != nil {
					return err
				}
				n++
			}
		}
	})
	return n, err
}

// Delete removes the tenant's risk id, if ifMatch holds, and then every dependent's
// rows of it, in one unit of work. The risk is read locked and deleted first, so
// that the deletion records the risk as last stored, and on PostgreSQL waits for an
// upload still holding the risk (attachments.Store.Create) and then removes that
// upload's row too. Errors: ErrNotFound, *StaleError (nothing is deleted), the
// store's.
func (s *Service) Delete(ctx context.Context, tenantID, id string, ifMatch IfMatch) error {
	return s.Tx.InTx(ctx, func(ctx context.Context) error {
		r, err := s.current(ctx, tenantID, id, ifMatch)
		if err != nil {
			return err
		}
		if err := s.Store.Delete(ctx, r); err != nil {
			return s.stale(ctx, tenantID, id, err)
		}
		for _, d := range s.Dependents {
			if _, err := d.DeleteByRisk(ctx, tenantID, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// current reads the risk locked — two updates of different fields at once must
// both be kept — and checks ifMatch against it.
func (s *Service) current(ctx context.Context, tenantID, id string, ifMatch IfMatch) (*Risk, error) {
	r, err := s.Store.GetForUpdate(ctx, tenantID, id)
	if err != nil {
		return nil, err
	}
	if !ifMatch.Holds(r.Version) {
		return nil, &StaleError{Current: r}
	}
	return r, nil
}

// stale turns the store's ErrVersionChanged into a *StaleError with the risk as
// stored now; other errors pass unchanged.
func (s *Service) stale(ctx context.Context, tenantID, id string, err error) error {
	if !errors.Is(err, ErrVersionChanged) {
		return err
	}
	r, gerr := s.Store.Get(ctx, tenantID, id)
	if gerr != nil {
		return gerr
	}
	return &StaleError{Current: r}
}
