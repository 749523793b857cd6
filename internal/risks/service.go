package risks

import "context"

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
}

// Create inserts r. One statement: atomic without a transaction of its own.
func (s *Service) Create(ctx context.Context, r *Risk) error { return s.Store.Create(ctx, r) }

// Update reads the tenant's risk id, lets change modify it, and stores it, in one
// unit of work. It returns the stored risk. A change that alters no stored field
// writes nothing and records nothing (the risk is returned as it was). Errors:
// ErrNotFound, change's error (nothing is then written), the store's.
func (s *Service) Update(ctx context.Context, tenantID, id string, change func(*Risk) error) (*Risk, error) {
	var out *Risk
	err := s.Tx.InTx(ctx, func(ctx context.Context) error {
		// Locked: two updates of different fields at once must both be kept.
		before, err := s.Store.GetForUpdate(ctx, tenantID, id)
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
		if err := s.Store.Update(ctx, before, &after); err != nil {
			return err
		}
		out = &after
		return nil
	})
	return out, err
}

// Delete removes the tenant's risk id and then every dependent's rows of it, in one
// unit of work. The risk is read locked and deleted first, so that the deletion
// records the risk as last stored, and on PostgreSQL waits for an upload still
// holding the risk (attachments.Store.Create) and then removes that upload's row
// too. Errors: ErrNotFound, the store's.
func (s *Service) Delete(ctx context.Context, tenantID, id string) error {
	return s.Tx.InTx(ctx, func(ctx context.Context) error {
		r, err := s.Store.GetForUpdate(ctx, tenantID, id)
		if err != nil {
			return err
		}
		if err := s.Store.Delete(ctx, r); err != nil {
			return err
		}
		for _, d := range s.Dependents {
			if _, err := d.DeleteByRisk(ctx, tenantID, id); err != nil {
				return err
			}
		}
		return nil
	})
}
