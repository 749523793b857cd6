package risks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riskapi/riskapi/internal/problem"
)

// ImportRow is one row of an import (docs/register.md): the risk with ExternalID is
// changed by Change, or created from it when there is none, as is a row without an
// external ID. Change gives every column the file has; Metadata, when given,
// replaces the risk's metadata rather than merging into it.
type ImportRow struct {
	Row        int // the row's number in its file, for errors
	ExternalID *string
	Change     Update
}

// ImportReport is what an import did, or would do (dry run).
type ImportReport struct {
	Created, Updated, Unchanged int
}

// Import writes rows for tenantID as one unit of work: every row valid and every
// change written, each through the Store so it is recorded, or nothing. With dryRun
// it writes nothing and reports the same. newID names each created risk; now is
// their timestamp. Errors: *problem.Problem VALIDATION_FAILED listing every bad row's
// fields (FieldError.Row); the store's.
func (s *Service) Import(ctx context.Context, tenantID string, rows []ImportRow, dryRun bool, newID func() string, now time.Time) (ImportReport, error) {
	var rep ImportReport
	err := s.Tx.InTx(ctx, func(ctx context.Context) error {
		rep = ImportReport{}
		var bad []problem.FieldError
		seen := map[string]int{}
		for _, row := range rows {
			errs, err := s.importRow(ctx, tenantID, row, seen, dryRun, newID, now, &rep)
			if err != nil {
				return err
			}
			bad = append(bad, errs...)
		}
		if p := problem.Rows(bad); p != nil {
			return p
		}
		return nil
	})
	return rep, err
}

// importRow plans and, unless dryRun, writes one row; it returns the row's field
// errors.
func (s *Service) importRow(ctx context.Context, tenantID string, row ImportRow, seen map[string]int,
	dryRun bool, newID func() string, now time.Time, rep *ImportReport) ([]problem.FieldError, error) {
	var current *Risk
	if row.ExternalID != nil {
		if first, dup := seen[*row.ExternalID]; dup {
			return []problem.FieldError{{Row: row.Row, Field: "externalId", Detail: fmt.Sprintf("is on row %d already", first)}}, nil
		}
		seen[*row.ExternalID] = row.Row
		r, err := s.Store.GetByExternalID(ctx, tenantID, *row.ExternalID)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		if r != nil && !dryRun {
			// Locked, as Service.Update reads: a concurrent change waits, not lost.
			if r, err = s.Store.GetForUpdate(ctx, tenantID, r.ID); err != nil {
				return nil, err
			}
		}
		current = r
	}
	if current == nil {
		r, err := New(newID(), tenantID, row.Change.Fields(), now)
		if err != nil {
			return rowErrors(row.Row, err)
		}
		r.ExternalID = row.ExternalID
		rep.Created++
		if dryRun {
			return nil, nil
		}
		return nil, s.Store.Create(ctx, r)
	}
	change := row.Change
	if change.Metadata != nil {
		change.Metadata = replacing(current.Metadata, change.Metadata)
	}
	after := *current
	if err := after.Apply(change, now); err != nil {
		return rowErrors(row.Row, err)
	}
	if after.sameAs(current) {
		rep.Unchanged++
		return nil, nil
	}
	rep.Updated++
	if dryRun {
		return nil, nil
	}
	after.Version = current.Version + 1
	return nil, s.Store.Update(ctx, current, &after)
}

// replacing is the metadata change that turns old into next: next's keys, and ""
// for each key of old that next lacks.
func replacing(old, next map[string]string) map[string]string {
	out := map[string]string{}
	for k := range old {
		out[k] = ""
	}
	for k, v := range next {
		out[k] = v
	}
	return out
}

// rowErrors turns a validation problem into the row's field errors; any other
// error passes unchanged.
func rowErrors(row int, err error) ([]problem.FieldError, error) {
	p := problem.As(err)
	if p == nil || p.Code != problem.ValidationFailed {
		return nil, err
	}
	out := make([]problem.FieldError, len(p.Errors))
	for i, e := range p.Errors {
		out[i] = problem.FieldError{Row: row, Field: e.Field, Detail: e.Detail}
	}
	return out, nil
}
