package risks

import (
	"context"
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

// importBatch is how many new risks Import writes at once (Store.CreateMany).
const importBatch = 1000

// Import writes rows for tenantID as one unit of work: every row valid and every
// change written, each through the Store so it is recorded, or nothing. With dryRun
// it writes nothing and reports the same. newID names each created risk; now is
// their timestamp. Errors: *problem.Problem VALIDATION_FAILED listing every bad row's
// fields (FieldError.Row); the store's.
//
// The rows' external IDs are looked up a thousand at a time, and new risks are
// created a thousand at a time (Store.CreateMany), in file order: the creations
// gathered so far are written before a row that updates. Once a row is bad nothing
// more is written (the unit of work rolls back), but every row is still checked.
func (s *Service) Import(ctx context.Context, tenantID string, rows []ImportRow, dryRun bool, newID func() string, now time.Time) (ImportReport, error) {
	var rep ImportReport
	err := s.Tx.InTx(ctx, func(ctx context.Context) error {
		rep = ImportReport{}
		var external []string
		for _, row := range rows {
			if row.ExternalID != nil {
				external = append(external, *row.ExternalID)
			}
		}
		stored, err := s.Store.GetByExternalIDs(ctx, tenantID, external)
		if err != nil {
			return err
		}
		im := importer{s: s, tenantID: tenantID, stored: stored, seen: map[string]int{},
			dryRun: dryRun, newID: newID, now: now, rep: &rep}
		for _, row := range rows {
			if err := im.row(ctx, row); err != nil {
				return err
			}
		}
		if err := im.flush(ctx); err != nil {
			return err
		}
		if p := problem.Rows(im.bad); p != nil {
			return p
		}
		return nil
	})
	return rep, err
}

// importer is one Import's progress.
type importer struct {
	s        *Service
	tenantID string
	stored   map[string]*Risk // the tenant's risks with the file's external IDs
	seen     map[string]int   // external ID → the row that named it first
	dryRun   bool
	newID    func() string
	now      time.Time
	rep      *ImportReport
	bad      []problem.FieldError
	created  []*Risk // to write (CreateMany)
}

// writes says whether rows are still written: not in a dry run, nor once a row was
// bad (the unit of work will roll back).
func (im *importer) writes() bool { return !im.dryRun && len(im.bad) == 0 }

// flush writes the creations gathered so far.
func (im *importer) flush(ctx context.Context) error {
	if len(im.created) == 0 {
		return nil
	}
	rs := im.created
	im.created = nil
	if !im.writes() {
		return nil
	}
	return im.s.Store.CreateMany(ctx, rs)
}

// row plans one row and, unless writes says otherwise, writes it or gathers it for
// the next CreateMany; its field errors go to im.bad.
func (im *importer) row(ctx context.Context, row ImportRow) error {
	errs, err := im.plan(ctx, row)
	im.bad = append(im.bad, errs...)
	return err
}

func (im *importer) plan(ctx context.Context, row ImportRow) ([]problem.FieldError, error) {
	var current *Risk
	if row.ExternalID != nil {
		if first, dup := im.seen[*row.ExternalID]; dup {
			return []problem.FieldError{{Row: row.Row, Field: "externalId", Detail: fmt.Sprintf("is on row %d already", first)}}, nil
		}
		im.seen[*row.ExternalID] = row.Row
		current = im.stored[*row.ExternalID]
	}
	if current == nil {
		r, err := New(im.newID(), im.tenantID, row.Change.Fields(), im.now)
		if err != nil {
			return rowErrors(row.Row, err)
		}
		r.ExternalID = row.ExternalID
		im.rep.Created++
		if !im.writes() {
			return nil, nil
		}
		im.created = append(im.created, r)
		if len(im.created) >= importBatch {
			return nil, im.flush(ctx)
		}
		return nil, nil
	}
	if im.writes() {
		// In file order: the creations before this row are written first.
		if err := im.flush(ctx); err != nil {
			return nil, err
		}
		// Locked, as Service.Update reads: a concurrent change waits, not lost.
		r, err := im.s.Store.GetForUpdate(ctx, im.tenantID, current.ID)
		if err != nil {
			return nil, err
		}
		current = r
	}
	change := row.Change
	if change.Metadata != nil {
		change.Metadata = replacing(current.Metadata, change.Metadata)
	}
	after := *current
	if err := after.Apply(change, im.now); err != nil {
		return rowErrors(row.Row, err)
	}
	if after.sameAs(current) {
		im.rep.Unchanged++
		return nil, nil
	}
	im.rep.Updated++
	if !im.writes() {
		return nil, nil
	}
	after.Version = current.Version + 1
	return nil, im.s.Store.Update(ctx, current, &after)
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
