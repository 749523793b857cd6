package risks

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
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
	// Columns are the file's column names in file order (one slice shared by every
	// row): a row's errors are listed in that order (docs/register.md).
	Columns []string
	// Bytes is the size of the row in its file, which bounds what Import holds at
	// once.
	Bytes int
	// Unreadable marks a row its file's reader could not split into the header's
	// columns (a CSV record of another length, a misplaced quote): Errors says
	// so, and nothing else of it is checked.
	Unreadable bool
}

// ImportSource hands an import's rows to fn one at a time, in file order, from the
// first row each time it is called (Import reads the file once to check it, then
// once or twice to write it), and returns fn's first error or its own (a file that is no
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
	// Carries reports whether ctx carries a unit of work, which commits after
	// the call that was given ctx returns (a keyed request's).
	Carries(ctx context.Context) bool
}

// ImportUnits is implemented by a store whose query plans can go stale within one
// unit of work that writes many rows and reads them back as it goes (an import,
// batch after batch, looks up the external IDs and IDs of the next): PrepareImportUnit
// is called first in such a unit of work. PostgreSQL: a prepared statement's plan,
// made when the tenant had few rows, would scan every row written since, each
// batch longer than the last (docs/performance.md, "The register at size").
type ImportUnits interface {
	PrepareImportUnit(ctx context.Context) error
}

// inImportUnit runs fn in ctx's unit of work (or a new one), prepared first by the
// store's ImportUnits when it has them.
func (s *Service) inImportUnit(ctx context.Context, fn func(ctx context.Context) error) error {
	return s.Tx.InTx(ctx, func(ctx context.Context) error {
		if u, ok := s.Store.(ImportUnits); ok {
			if err := u.PrepareImportUnit(ctx); err != nil {
				return err
			}
		}
		return fn(ctx)
	})
}

// PendingImports is implemented by a Store whose import writes its new risks in
// short units of work, each row marked with the import and read by no one until
// the import is published (SQLite: its one write lock is then never held for a
// whole import; docs/register.md "Import", migration 0031).
type PendingImports interface {
	// BeginImport commits a pending import of tenantID, outside ctx's unit of
	// work, and returns its ID: the tenant's reads leave its rows out from now
	// on. "" when the store imports in one unit of work (PostgreSQL).
	BeginImport(ctx context.Context, tenantID string, now time.Time) (string, error)
	// Marking returns ctx marking what is written through it with import id.
	Marking(ctx context.Context, id string) context.Context
	// PublishImport ends id's pending state in ctx's unit of work: its rows are
	// read once that commits.
	PublishImport(ctx context.Context, id string) error
	// SettleImport is called once the unit of work that would publish id has
	// ended, committed or not: if id is still pending it deletes its rows in
	// short units of work (the take-back), then stops hiding them.
	SettleImport(ctx context.Context, id string) error
	// PendingImports are the imports left pending by a process that died, by ID
	// with their tenant, hidden from their tenant's reads until settled.
	PendingImports(ctx context.Context) (map[string]string, error)
	// ImportPending reports whether tenantID may have a pending import's rows,
	// which its reads leave out.
	ImportPending(tenantID string) bool
}

// ImportPending reports whether tenantID may have rows of an import not yet
// published (SQLite; docs/register.md "Import"): a create whose external ID is
// among them fails on the unique index though no read finds the risk, and is
// better retried once the import is published (ImportInProgress).
func (s *Service) ImportPending(tenantID string) bool {
	p, ok := s.Store.(PendingImports)
	return ok && p.ImportPending(tenantID)
}

// ImportInProgress is the 409 IMPORT_IN_PROGRESS of a write that meets the
// tenant's import: one runs at a time, and a pending one's rows wait for it.
func ImportInProgress(detail string) *problem.Problem {
	p := problem.New(problem.ImportInProgress, "%s", detail)
	p.RetryAfter = ImportRetryAfter
	return p
}

const (
	// importBatch is how many rows Import checks and writes at once: their
	// external IDs looked up in one read, new risks in one Store.CreateMany.
	importBatch = 1000
	// importChunk is how many rows a pending import writes in each of its short
	// units of work (PendingImports): each holds SQLite's write lock about a
	// second at most at 100,000 rows (docs/performance.md).
	importChunk = 500
	// importBatchBytes bounds the rows of a batch by their size in the file too,
	// so that a file of large cells keeps the memory an import holds in bytes:
	// a batch's text is held many times over while it is written (each risk's
	// cells again in its event and audit entry, then in pgx's encoded parameters
	// and Bind message), so 2 MiB batches grew a written import on PostgreSQL by
	// 92–97 MiB whatever the file's size (docs/performance.md, issue 36).
	importBatchBytes = 512 << 10
	// MaxImportErrors is how many field errors an import's 400 lists at most; its
	// detail counts them all (problem.RowsOf).
	MaxImportErrors = 1000
	// ImportRetryAfter is the Retry-After of IMPORT_IN_PROGRESS.
	ImportRetryAfter = 5 * time.Second
)

// Import writes the rows of src for tenantID all or nothing: every row valid and
// every change written, each through the Store so it is recorded, or nothing —
// in ctx's unit of work, or on a Store with PendingImports (SQLite) new risks
// first in short units of work, hidden until ctx's publishes them (importPending).
// With dryRun it writes nothing and reports the same. newID names each created risk;
// now is their timestamp.
//
// The file is read as a stream, twice (three times with PendingImports: new risks,
// then the rest): a first pass checks every row outside any
// transaction, holding a batch of rows at a time (importBatch, importBatchBytes)
// and the external IDs seen (as hashes); only when every row is valid, and not in a
// dry run, a second pass writes them, batch by batch, checking each row again
// against the risks as stored (locked) then. So a bad file never takes SQLite's
// write lock, and a good one holds it for one batch at a time.
//
// A tenant has at most one import running (Holds, when set). Errors:
// *problem.Problem IMPORT_IN_PROGRESS (with RetryAfter) when another is running;
// VALIDATION_FAILED listing the bad rows' fields (FieldError.Row; the first
// MaxImportErrors); src's; the store's.
func (s *Service) Import(ctx context.Context, tenantID string, src ImportSource, dryRun bool, newID func() string, now time.Time) (ImportReport, error) {
	release := func() {}
	if s.Holds != nil {
		free, ok, err := s.Holds.TryHold(ctx, "risks.import", tenantID)
		if err != nil {
			return ImportReport{}, err
		}
		if !ok {
			return ImportReport{}, ImportInProgress("an import of this tenant's risks is running: one runs at a time; retry when it has finished")
		}
		release = free
	}
	checkCtx := ctx
	o, outside := s.Tx.(Outside)
	if outside {
		checkCtx = o.Outside(ctx)
	}
	rep, err := s.importPass(checkCtx, tenantID, src, passCheck, newID, now, nil)
	if err != nil || dryRun {
		release()
		return rep, err
	}
	if p, ok := s.Store.(PendingImports); ok && outside {
		id, err := p.BeginImport(checkCtx, tenantID, now)
		if err != nil {
			release()
			return ImportReport{}, err
		}
		if id != "" {
			return s.importPending(ctx, checkCtx, o, p, id, release, tenantID, src, newID, now)
		}
	}
	defer release()
	err = s.inImportUnit(ctx, func(ctx context.Context) error {
		var err error
		rep, err = s.importPass(ctx, tenantID, src, passWrite, newID, now, nil)
		return err
	})
	return rep, err
}

// importPending writes a checked import as pending import id (PendingImports):
// its new risks marked, importChunk rows per unit of work outside ctx's; then, in
// ctx's unit of work (a keyed request's, with its record), its changes to
// existing risks and its publication. Once that unit of work has ended it is
// settled (taken back unless published) and the tenant's import hold released:
// a retry of an import that failed waits for its rows to be gone. The changes to
// existing risks cannot be hidden in place, so an import of many updates still
// holds the write lock while it applies them.
func (s *Service) importPending(ctx, outCtx context.Context, o Outside, p PendingImports, id string, release func(),
	tenantID string, src ImportSource, newID func() string, now time.Time) (ImportReport, error) {
	created := &rowSet{}
	rep, err := s.importPass(p.Marking(outCtx, id), tenantID, src, passCreate, newID, now, created)
	if err == nil {
		err = s.inImportUnit(ctx, func(ctx context.Context) error {
			rest, err := s.importPass(ctx, tenantID, src, passRest, newID, now, created)
			rep.Created += rest.Created
			rep.Updated, rep.Unchanged = rest.Updated, rest.Unchanged
			if err != nil {
				return err
			}
			return p.PublishImport(ctx, id)
		})
	}
	if err == nil && o.Carries(ctx) {
		// Published when the request's unit of work commits, which a client may
		// see before the settlement below runs: its next import must not be
		// refused. (Should that commit fail, the take-back runs without the hold,
		// and an import that collides with the rows it has yet to delete fails
		// and is taken back in turn.)
		release()
		release = func() {}
	}
	settle := func() {
		defer release()
		if err := p.SettleImport(context.WithoutCancel(ctx), id); err != nil {
			s.logger().Error("import: taking back a failed import", slog.String("import_id", id),
				slog.String("tenant_id", tenantID), slog.String("error", err.Error()))
		}
	}
	switch {
	case o.Carries(ctx):
		// Published, if at all, when the request's unit of work commits.
		go func() { <-ctx.Done(); settle() }()
	case err == nil:
		settle() // published: nothing to take back
	default:
		go settle()
	}
	return rep, err
}

// ResumeTakeBacks settles the imports a process that died left pending
// (PendingImports): their rows are hidden now and taken back in the
// background, each tenant's import hold taken until its take-back is done, so
// that a client's retry is told IMPORT_IN_PROGRESS rather than collide with the
// dead rows. Call it at startup, before serving. Errors: the store's.
func (s *Service) ResumeTakeBacks(ctx context.Context) error {
	p, ok := s.Store.(PendingImports)
	if !ok {
		return nil
	}
	left, err := p.PendingImports(ctx)
	if err != nil {
		return err
	}
	for id, tenantID := range left {
		release := func() {}
		if s.Holds != nil {
			free, ok, err := s.Holds.TryHold(ctx, "risks.import", tenantID)
			if err != nil {
				return err
			}
			if ok {
				release = free
			}
		}
		s.logger().Info("import: taking back an import left pending", slog.String("import_id", id), slog.String("tenant_id", tenantID))
		go func() {
			defer release()
			if err := p.SettleImport(ctx, id); err != nil {
				s.logger().Error("import: taking back an import left pending", slog.String("import_id", id),
					slog.String("tenant_id", tenantID), slog.String("error", err.Error()))
			}
		}()
	}
	return nil
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// rowSet is a set of row numbers: the rows a pending import created.
type rowSet struct{ bits []uint64 }

func (r *rowSet) add(n int) {
	for n/64 >= len(r.bits) {
		r.bits = append(r.bits, 0)
	}
	r.bits[n/64] |= 1 << (n % 64)
}

func (r *rowSet) has(n int) bool { return n/64 < len(r.bits) && r.bits[n/64]&(1<<(n%64)) != 0 }

// pass is what one reading of an import's file does.
type pass int

const (
	passCheck  pass = iota // checks every row, writes nothing
	passWrite              // writes every row, in ctx's unit of work
	passCreate             // writes the new risks, importChunk rows per unit of work (a pending import)
	passRest               // writes the rows passCreate did not, in ctx's unit of work
)

// importPass reads src once: it checks every row and, with write, writes them. A
// pass that writes stops at the first bad row (its unit of work rolls back).
func (s *Service) importPass(ctx context.Context, tenantID string, src ImportSource, mode pass, newID func() string, now time.Time, created *rowSet) (ImportReport, error) {
	im := importer{s: s, tenantID: tenantID, seen: map[[sha256.Size]byte]int{}, seenID: map[[sha256.Size]byte]int{},
		write: mode != passCheck, mode: mode, created: created, newID: newID, now: now}
	per := importBatch
	batch := im.batch
	if mode == passCreate {
		// Each chunk its own unit of work, committed before the next is read.
		per = importChunk
		batch = func(ctx context.Context, rows []ImportRow) error {
			return s.Tx.InTx(ctx, func(ctx context.Context) error { return im.batch(ctx, rows) })
		}
	}
	var rows []ImportRow
	size := 0
	err := src(func(row ImportRow) error {
		rows = append(rows, row)
		size += row.Bytes
		if len(rows) < per && size < importBatchBytes {
			return nil
		}
		err := batch(ctx, rows)
		clear(rows) // let the rows go before the next are read
		rows, size = rows[:0], 0
		return err
	})
	if err == nil && len(rows) > 0 {
		err = batch(ctx, rows)
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
	seen  map[[sha256.Size]byte]int
	write bool
	mode  pass
	// created are the rows passCreate wrote, which passRest leaves.
	created  *rowSet
	newID    func() string
	now      time.Time
	rep      ImportReport
	bad      []problem.FieldError // the first MaxImportErrors
	badCount int
	seenID   map[[sha256.Size]byte]int // the same for IDs
	stored   map[string]*Risk          // the batch's risks by external ID
	byID     map[string]*Risk          // the batch's risks by ID
	toCreate []*Risk                   // to write (CreateMany)
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
		errs = slices.DeleteFunc(errs, func(e problem.FieldError) bool {
			// A cell that could not be read is named once, not again as missing.
			return slices.ContainsFunc(row.Errors, func(c problem.FieldError) bool { return c.Field == e.Field })
		})
		im.note(inFileOrder(append(slices.Clip(row.Errors), errs...), row.Columns))
		if im.write && im.badCount > 0 {
			// Checked in the first pass, the row has become bad since (a risk it
			// updates changed): nothing is written.
			return problem.RowsOf(im.bad, im.badCount)
		}
	}
	im.stored, im.byID = nil, nil
	return im.flush(ctx)
}

// inFileOrder sorts a row's errors by their column's place among columns; an error
// of no column (a rule on the row as a whole) goes last. Stable: a column's errors
// keep their order.
func inFileOrder(errs []problem.FieldError, columns []string) []problem.FieldError {
	at := func(field string) int {
		if i := slices.Index(columns, field); i >= 0 {
			return i
		}
		return len(columns)
	}
	slices.SortStableFunc(errs, func(a, b problem.FieldError) int { return at(a.Field) - at(b.Field) })
	return errs
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
	rs := im.toCreate
	im.toCreate = nil
	if len(rs) == 0 || !im.write {
		return nil
	}
	return im.s.Store.CreateMany(ctx, rs)
}

// plan checks one row and, in a writing pass, writes it or gathers it for the next
// CreateMany. It returns the row's field errors.
func (im *importer) plan(ctx context.Context, row ImportRow) ([]problem.FieldError, error) {
	if row.Unreadable || im.mode == passRest && im.created.has(row.Row) {
		return nil, nil
	}
	current, errs := im.current(row)
	if errs != nil {
		return errs, nil
	}
	if current != nil && im.mode == passCreate {
		return nil, nil // a change of an existing risk: passRest's
	}
	ownerErrs, err := im.owner(ctx, &row)
	if err != nil {
		return nil, err
	}
	if ownerErrs != nil {
		// The rest of the row is checked as if it named no owner, so that one
		// answer names all its errors; the owner's error keeps it from being written.
		row.Change.OwnerUserID, row.Change.Owner = nil, nil
		row.Errors = append(slices.Clip(row.Errors), ownerErrs...)
	}
	errs, err = im.planFields(ctx, row, current)
	return append(ownerErrs, errs...), err
}

// planFields is plan's check of a row's fields against current (nil: the row
// creates a risk), once its owner is known or reported.
func (im *importer) planFields(ctx context.Context, row ImportRow, current *Risk) ([]problem.FieldError, error) {
	if current == nil {
		r, err := New(im.newID(), im.tenantID, row.Change.Fields(), im.now)
		if err != nil {
			return rowErrors(row.Row, err)
		}
		r.ExternalID = row.ExternalID
		im.rep.Created++
		if im.write && len(row.Errors) == 0 {
			im.toCreate = append(im.toCreate, r)
			if im.mode == passCreate {
				im.created.add(row.Row)
			}
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
	if d := change.Description; d != nil && *d != current.Description && *d == strings.ReplaceAll(current.Description, "\r\n", "\n") {
		// A CSV reader turns a quoted cell's "\r\n" into "\n" (RFC 4180 leaves line
		// breaks to the reader; encoding/csv folds them): an export read back names the
		// stored description, not a change of its line breaks.
		change.Description = &current.Description
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

// current is the stored risk row names, if any (by ID, else by external ID),
// or the row's error when the file names it on an earlier row already; it notes
// what the row names, so that a risk is changed by one row only.
func (im *importer) current(row ImportRow) (*Risk, []problem.FieldError) {
	var current *Risk
	if row.ID != nil {
		key := sha256.Sum256([]byte(*row.ID))
		if first, dup := im.seenID[key]; dup {
			return nil, []problem.FieldError{{Row: row.Row, Field: "id", Detail: fmt.Sprintf("is on row %d already", first)}}
		}
		im.seenID[key] = row.Row
		current = im.byID[*row.ID]
	}
	if row.ExternalID != nil {
		key := sha256.Sum256([]byte(*row.ExternalID))
		if first, dup := im.seen[key]; dup {
			return nil, []problem.FieldError{{Row: row.Row, Field: "externalId", Detail: fmt.Sprintf("is on row %d already", first)}}
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
	return current, nil
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
// error passes unchanged. A rule's ", or null" (a field that may be cleared) reads
// ", or empty" here: an import is a CSV file, where an empty cell is the null a
// JSON body would send (riskview.ReadRow).
func rowErrors(row int, err error) ([]problem.FieldError, error) {
	p := problem.As(err)
	if p == nil || p.Code != problem.ValidationFailed {
		return nil, err
	}
	out := make([]problem.FieldError, len(p.Errors))
	for i, e := range p.Errors {
		detail := e.Detail
		if d, ok := strings.CutSuffix(detail, ", or null"); ok {
			detail = d + ", or empty"
		}
		out[i] = problem.FieldError{Row: row, Field: e.Field, Detail: detail}
	}
	return out, nil
}
