package risks

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/riskapi/riskapi/internal/problem"
)

// ImportRow is one row of an import (docs/register.md, contract section 13): the
// tenant's risk with ID, if there is one, is changed by Change; else the risk with
// ExternalID, or one is created from Change when there is none, as for a row with
// neither. Change gives every column the file has; Metadata, when given, replaces
// the risk's metadata rather than merging into it. A row that updates by ID keeps
// the risk's external ID.
type ImportRow struct {
	Row        int // the row's number in its file, for errors
	ID         *string
	ExternalID *string
	Change     Update
	// Errors are the row's cells that are no value of their column, found while
	// reading it (Row set); the row is checked further all the same.
	Errors []problem.FieldError
	// Bytes is the size of the row in its file, which bounds what Import holds at
	// once.
	Bytes int
}

// ImportSource hands an import's rows to fn one at a time, in file order, from the
// first row each time it is called (Import reads the file twice: once to check it,
// once to write it), and returns fn's first error or its own (a file that is no
// CSV, too many rows: a *problem.Problem). It must not hold rows fn has returned
// from: that is what keeps an import's memory bounded whatever the file's size.
type ImportSource func(fn func(ImportRow) error) error

// Rows is a source of rows already in memory (a small import built in code).
func Rows(rows []ImportRow) ImportSource {
	return func(fn func(ImportRow) error) error {
		for _, r := range rows {
			if err := fn(r); err != nil {
				return err
			}
		}
		return nil
	}
}

// ImportReport is what an import did, or would do (dry run).
type ImportReport struct {
	Created, Updated, Unchanged int
}

// Holds takes, without waiting, a lock that one holder has at a time across every
// instance (database.Holds).
type Holds interface {
	// TryHold takes the lock named by parts and returns the function that frees
	// it; ok false when another holds it. Errors: the store's.
	TryHold(ctx context.Context, parts ...string) (release func(), ok bool, err error)
}

// Outside is implemented by a UnitOfWork that can give a context whose reads run
// outside the transaction ctx carries (database.Runner): an import's checking pass
// reads without beginning a keyed request's transaction, so that on SQLite the
// single write lock is taken only for the writing pass.
type Outside interface {
	Outside(ctx context.Context) context.Context
}

const (
	// importBatch is how many rows Import checks and writes at once: their
	// external IDs looked up in one read, new risks in one Store.CreateMany.
	importBatch = 1000
	// importBatchBytes bounds the rows of a batch by their size in the file too,
	// so that a file of large cells keeps the memory an import holds in bytes.
	importBatchBytes = 2 << 20
	// MaxImportErrors is how many field errors an import's 400 lists at most; its
	// detail counts them all (problem.RowsOf).
	MaxImportErrors = 1000
	// ImportRetryAfter is the Retry-After of IMPORT_IN_PROGRESS.
	ImportRetryAfter = 5 * time.Second
)

// Import writes the rows of src for tenantID as one unit of work: every row valid
// and every change written, each through the Store so it is recorded, or nothing.
// With dryRun it writes nothing and reports the same. newID names each created risk;
// now is their timestamp.
//
// The file is read as a stream, twice: a first pass checks every row outside any
// transaction, holding a batch of rows at a time (importBatch, importBatchBytes)
// and the external IDs seen (as hashes); only when every row is valid, and not in a
// dry run, a second pass writes them in one unit of work, batch by batch, checking
// each row again against the risks as stored (locked) then. So on SQLite the write
// lock is held for the writing only, and a bad file never takes it.
//
// A tenant has at most one import running (Holds, when set). Errors:
// *problem.Problem IMPORT_IN_PROGRESS (with RetryAfter) when another is running;
// VALIDATION_FAILED listing the bad rows' fields (FieldError.Row; the first
// MaxImportErrors); src's; the store's.
func (s *Service) Import(ctx context.Context, tenantID string, src ImportSource, dryRun bool, newID func() string, now time.Time) (ImportReport, error) {
	if s.Holds != nil {
		release, ok, err := s.Holds.TryHold(ctx, "risks.import", tenantID)
		if err != nil {
			return ImportReport{}, err
		}
		if !ok {
			p := problem.New(problem.ImportInProgress, "an import of this tenant's risks is running: one runs at a time; retry when it has finished")
			p.RetryAfter = ImportRetryAfter
			return ImportReport{}, p
		}
		defer release()
	}
	checkCtx := ctx
	if o, ok := s.Tx.(Outside); ok {
		checkCtx = o.Outside(ctx)
	}
	rep, err := s.importPass(checkCtx, tenantID, src, false, newID, now)
	if err != nil || dryRun {
		return rep, err
	}
	err = s.Tx.InTx(ctx, func(ctx context.Context) error {
		var err error
		rep, err = s.importPass(ctx, tenantID, src, true, newID, now)
		return err
	})
	return rep, err
}

// importPass reads src once: it checks every row and, with write, writes them. A
// pass that writes stops at the first bad row (its unit of work rolls back).
func (s *Service) importPass(ctx context.Context, tenantID string, src ImportSource, write bool, newID func() string, now time.Time) (ImportReport, error) {
	im := importer{s: s, tenantID: tenantID, seen: map[[sha256.Size]byte]int{}, seenID: map[[sha256.Size]byte]int{},
		write: write, newID: newID, now: now}
	var batch []ImportRow
	size := 0
	err := src(func(row ImportRow) error {
		batch = append(batch, row)
		size += row.Bytes
		if len(batch) < importBatch && size < importBatchBytes {
			return nil
		}
		err := im.batch(ctx, batch)
		clear(batch) // let the rows go before the next are read
		batch, size = batch[:0], 0
		return err
	})
	if err == nil {
		err = im.batch(ctx, batch)
	}
	if err != nil {
		return im.rep, err
	}
	if p := problem.RowsOf(im.bad, im.badCount); p != nil {
		return im.rep, p
	}
	return im.rep, nil
}

// importer is one pass's progress.
type importer struct {
	s        *Service
	tenantID string
	// seen maps the hash of each external ID read to the row that named it first
	// (a hash, so that the memory it takes does not grow with the IDs' length).
	seen     map[[sha256.Size]byte]int
	write    bool
	newID    func() string
	now      time.Time
	rep      ImportReport
	bad      []problem.FieldError // the first MaxImportErrors
	badCount int
	seenID   map[[sha256.Size]byte]int // the same for IDs
	stored   map[string]*Risk          // the batch's risks by external ID
	byID     map[string]*Risk          // the batch's risks by ID
	created  []*Risk                   // to write (CreateMany)
}

// batch checks rows and, in a writing pass, writes them.
func (im *importer) batch(ctx context.Context, rows []ImportRow) error {
	if len(rows) == 0 {
		return nil
	}
	var external, ids []string
	for _, row := range rows {
		if row.ExternalID != nil {
			external = append(external, *row.ExternalID)
		}
		if row.ID != nil {
			ids = append(ids, *row.ID)
		}
	}
	stored, err := im.s.Store.GetByExternalIDs(ctx, im.tenantID, external)
	if err != nil {
		return err
	}
	byID, err := im.s.Store.GetByIDs(ctx, im.tenantID, ids)
	if err != nil {
		return err
	}
	im.stored, im.byID = stored, byID
	for _, row := range rows {
		errs, err := im.plan(ctx, row)
		if err != nil {
			return err
		}
		im.note(row.Errors)
		im.note(slices.DeleteFunc(errs, func(e problem.FieldError) bool {
			// A cell that could not be read is named once, not again as missing.
			return slices.ContainsFunc(row.Errors, func(c problem.FieldError) bool { return c.Field == e.Field })
		}))
		if im.write && im.badCount > 0 {
			// Checked in the first pass, the row has become bad since (a risk it
			// updates changed): nothing is written.
			return problem.RowsOf(im.bad, im.badCount)
		}
	}
	im.stored, im.byID = nil, nil
	return im.flush(ctx)
}

// note keeps errs, up to MaxImportErrors in all, and counts them.
func (im *importer) note(errs []problem.FieldError) {
	im.badCount += len(errs)
	if room := MaxImportErrors - len(im.bad); room > 0 {
		im.bad = append(im.bad, errs[:min(room, len(errs))]...)
	}
}

// flush writes the creations gathered so far.
func (im *importer) flush(ctx context.Context) error {
	rs := im.created
	im.created = nil
	if len(rs) == 0 || !im.write {
		return nil
	}
	return im.s.Store.CreateMany(ctx, rs)
}

// plan checks one row and, in a writing pass, writes it or gathers it for the next
// CreateMany. It returns the row's field errors.
func (im *importer) plan(ctx context.Context, row ImportRow) ([]problem.FieldError, error) {
	var current *Risk
	if row.ID != nil {
		key := sha256.Sum256([]byte(*row.ID))
		if first, dup := im.seenID[key]; dup {
			return []problem.FieldError{{Row: row.Row, Field: "id", Detail: fmt.Sprintf("is on row %d already", first)}}, nil
		}
		im.seenID[key] = row.Row
		current = im.byID[*row.ID]
	}
	if row.ExternalID != nil {
		key := sha256.Sum256([]byte(*row.ExternalID))
		if first, dup := im.seen[key]; dup {
			return []problem.FieldError{{Row: row.Row, Field: "externalId", Detail: fmt.Sprintf("is on row %d already", first)}}, nil
		}
		im.seen[key] = row.Row
		if current == nil {
			current = im.stored[*row.ExternalID]
		}
	}
	if current != nil {
		// A risk is changed by one row only, however the later one names it.
		if key := sha256.Sum256([]byte(current.ID)); im.seenID[key] == 0 {
			im.seenID[key] = row.Row
		}
		if current.ExternalID != nil {
			if key := sha256.Sum256([]byte(*current.ExternalID)); im.seen[key] == 0 {
				im.seen[key] = row.Row
			}
		}
	}
	if errs, err := im.owner(ctx, &row); errs != nil || err != nil {
		return errs, err
	}
	if current == nil {
		r, err := New(im.newID(), im.tenantID, row.Change.Fields(), im.now)
		if err != nil {
			return rowErrors(row.Row, err)
		}
		r.ExternalID = row.ExternalID
		im.rep.Created++
		if im.write && len(row.Errors) == 0 {
			im.created = append(im.created, r)
		}
		return nil, nil
	}
	if im.write && len(row.Errors) == 0 {
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
	if !im.write || len(row.Errors) > 0 {
		return nil, nil
	}
	after.Version = current.Version + 1
	return nil, im.s.Store.Update(ctx, current, &after)
}

// owner gives a row's user owner its name (FillOwner); an unknown user is the
// row's ownerId error.
func (im *importer) owner(ctx context.Context, row *ImportRow) ([]problem.FieldError, error) {
	if row.Change.OwnerUserID == nil {
		return nil, nil
	}
	err := FillOwner(ctx, im.s.Owners, im.tenantID, &row.Change.Owner, row.Change.OwnerUserID)
	if errors.Is(err, ErrOwnerUnknown) {
		return []problem.FieldError{{Row: row.Row, Field: "ownerId", Detail: "is no user of this tenant"}}, nil
	}
	return nil, err
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
