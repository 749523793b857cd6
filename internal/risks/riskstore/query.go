package riskstore

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/risks"
)

// postgres reports whether s stores on PostgreSQL (else SQLite).
func (s *Store) postgres() bool { return s.db.Dialector.Name() == "postgres" }

// selected is a statement on the tenant's risks that q's filters select (its sort
// aside). Which index serves which filter: docs/register.md.
//
// paged says the statement reads a page in an index's order, which lets a q search
// of common words on SQLite walk that index (containing).
func (s *Store) selected(ctx context.Context, tenantID string, q risks.Query, paged bool) (*gorm.DB, error) {
	db := s.tenant(ctx, tenantID).Model(&row{})
	// A page on SQLite checks status and treatment on the rows its sort's index
	// walks (the unary + keeps them off idx_risks_tenant_heatmap): at most 12 values
	// together, a page is reached within a few hundred rows, whereas reading them
	// through the heat map's index sorts every selected row first
	// (docs/performance.md).
	plus := ""
	if paged && !s.postgres() {
		plus = "+"
	}
	if len(q.Statuses) > 0 {
		db = db.Where(plus+"status IN ?", q.Statuses)
	}
	if len(q.Treatments) > 0 {
		db = db.Where(plus+"treatment IN ?", q.Treatments)
	}
	db = where(db, "category = ?", q.Category)
	db = where(db, "owner = ?", q.Owner)
	db = where(db, "risk_score >= ?", q.MinScore)
	db = where(db, "risk_score <= ?", q.MaxScore)
	db = where(db, "review_date < ?", q.ReviewBefore)
	db = where(db, "created_at >= ?", q.CreatedSince)
	db = where(db, "created_at < ?", q.CreatedUntil)
	db = where(db, "updated_at >= ?", q.UpdatedSince)
	for k, v := range q.Metadata {
		// Keys are [A-Za-z0-9_.-] (risks.ValidMetadataKey): safe inside the path.
		if s.postgres() {
			db = db.Where("(metadata::jsonb ->> ?) = ?", k, v)
		} else {
			db = db.Where("json_extract(metadata, ?) = ?", `$."`+k+`"`, v)
		}
	}
	// Last: on SQLite's walk the other filters are checked before a row is probed.
	return s.containing(ctx, db, tenantID, q.Words, paged)
}

// where adds cond with *v when v is set.
func where[T any](db *gorm.DB, cond string, v *T) *gorm.DB {
	if v == nil {
		return db
	}
	return db.Where(cond, *v)
}

// containing keeps the risks whose title or description holds each of words,
// case-insensitive. PostgreSQL: ILIKE per word, served by the pg_trgm GIN indexes.
// SQLite: LIKE for words under three characters, which a trigram index cannot
// answer (ASCII case folding only); the others are matched as the FTS5 trigram
// index risks_fts matches them (each a quoted phrase, all required), in one of two
// ways that select the same rows (docs/register.md):
//
//   - the set of rowids risks_fts matches, read whole: when the tenant has fewer
//     than denseMatches matches, or the statement is not paged (a heat map counts
//     every match), or a word is not ASCII;
//   - else per row, as the page's own index walk reaches it: LIKE on a row of
//     ASCII text (where LIKE's ASCII case folding is the index's), a probe of
//     risks_fts for that rowid on any other row. A page of common words then reads
//     a few dozen rows, not every match of every tenant.
func (s *Store) containing(ctx context.Context, db *gorm.DB, tenantID string, words []string, paged bool) (*gorm.DB, error) {
	var phrases, likes []string
	var args []any
	ascii := true
	for _, w := range words {
		pattern := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(w) + "%"
		switch {
		case s.postgres():
			db = db.Where(`(title ILIKE ? ESCAPE '\' OR description ILIKE ? ESCAPE '\')`, pattern, pattern)
		case utf8.RuneCountInString(w) >= 3:
			phrases = append(phrases, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
			likes = append(likes, `(title LIKE ? ESCAPE '\' OR description LIKE ? ESCAPE '\')`)
			args = append(args, pattern, pattern)
			ascii = ascii && isASCII(w)
		default:
			db = db.Where(`(title LIKE ? ESCAPE '\' OR description LIKE ? ESCAPE '\')`, pattern, pattern)
		}
	}
	if len(phrases) == 0 {
		return db, nil
	}
	match := strings.Join(phrases, " ")
	if !paged || !ascii {
		return db.Where("rowid IN (SELECT rowid FROM risks_fts WHERE risks_fts MATCH ?)", match), nil
	}
	// risks_fts yields its matches in turn, so the count stops at denseMatches.
	var n int64
	found := s.tenant(ctx, tenantID).Table("risks_fts CROSS JOIN risks").Select("1").
		Where("risks_fts MATCH ? AND risks.rowid = risks_fts.rowid", match).Limit(denseMatches)
	if err := database.Conn(ctx, s.db).Table("(?) AS found", found).Count(&n).Error; err != nil {
		return nil, fmt.Errorf("count risks matching q: %w", err)
	}
	if n < denseMatches {
		return db.Where("rowid IN (SELECT rowid FROM risks_fts WHERE risks_fts MATCH ?)", match), nil
	}
	return db.Where("(("+strings.Join(likes, " AND ")+") OR ("+notASCII+
		" AND EXISTS (SELECT 1 FROM risks_fts WHERE risks_fts MATCH ? AND risks_fts.rowid = risks.rowid)))",
		append(args, match)...), nil
}

// notASCII holds for a row whose title or description has a character outside
// ASCII: one whose text is longer in bytes than in characters.
const notASCII = "(length(CAST(title AS BLOB)) != length(title) OR length(CAST(description AS BLOB)) != length(description))"

// isASCII reports whether w is ASCII only.
func isASCII(w string) bool {
	for i := range len(w) {
		if w[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// denseMatches is how many matches of a q search the tenant must have on SQLite for
// a page to be read by the walk of its index (containing): reading this many
// matches whole costs a few milliseconds; past it, a page of matches is reached
// sooner by the walk.
const denseMatches = 1000

// sorted is the keyset order of sort on this store. Titles sort by code point on
// both stores (COLLATE "C" on PostgreSQL, SQLite's BINARY), so both list alike.
func (s *Store) sorted(sort risks.Sort) database.Sorted {
	out := database.Sorted{Desc: sort.Desc}
	switch sort.Field {
	case risks.SortUpdatedAt:
		out.Column = "updated_at"
	case risks.SortRiskScore:
		out.Column, out.Nullable = "risk_score", true
	case risks.SortTitle:
		out.Column = "title"
		if s.postgres() {
			out.Column = `title COLLATE "C"`
		}
	case risks.SortReviewDate:
		out.Column, out.Nullable = "review_date", true
	default:
		out.Column = "created_at"
	}
	return out
}

// List returns up to f.Limit of the risks f selects, in its order past f.After, and
// whether more follow (database.PageSorted).
func (s *Store) List(ctx context.Context, tenantID string, f risks.Filter) ([]*risks.Risk, bool, error) {
	var after *database.After
	if f.After != nil {
		after = &database.After{Key: f.After.Key, ID: f.After.ID}
	}
	sel, err := s.selected(ctx, tenantID, f.Query, true)
	if err != nil {
		return nil, false, err
	}
	out, more, err := database.PageSorted(sel, s.sorted(f.Sort), after, f.Limit, toRisk)
	if err != nil {
		return nil, false, fmt.Errorf("list risks: %w", err)
	}
	return out, more, nil
}

// Heatmap counts the risks q selects by the likelihood and impact of basis. When q
// filters on nothing but statuses and treatments it sums the tenant's rows of
// risk_heat_counts, whose size does not grow with the tenant's risks (countedHeatmap);
// any other filter counts the selected risks in one grouped statement
// (scannedHeatmap). Like a list, it may read a replica that is behind
// (database.MayLag; docs/deploying.md, Replicas).
func (s *Store) Heatmap(ctx context.Context, tenantID string, q risks.Query, basis risks.Basis) (*risks.Heatmap, error) {
	ctx = database.MayLag(ctx)
	if countable(q) {
		return s.countedHeatmap(ctx, tenantID, q, basis)
	}
	return s.scannedHeatmap(ctx, tenantID, q, basis)
}

// cell is a heat map's grouped row: likelihood, impact (either may be NULL on a
// scan, 0 in the counts when missing) and how many risks.
type cell struct {
	L, I *int
	N    int
}

// heatmapOf adds up cells; a cell without a likelihood or impact in 1–5 is
// unassessed.
func heatmapOf(cells []cell) *risks.Heatmap {
	var h risks.Heatmap
	for _, c := range cells {
		if c.L == nil || c.I == nil || *c.L < 1 || *c.L > 5 || *c.I < 1 || *c.I > 5 {
			h.Unassessed += c.N
			continue
		}
		h.Counts[*c.L-1][*c.I-1] += c.N
	}
	return &h
}

// scannedHeatmap counts the risks q selects, reading each (through
// idx_risks_tenant_heatmap when q filters on status or treatment only).
func (s *Store) scannedHeatmap(ctx context.Context, tenantID string, q risks.Query, basis risks.Basis) (*risks.Heatmap, error) {
	l, i := "likelihood", "impact"
	if basis == risks.BasisResidual {
		l, i = "residual_likelihood", "residual_impact"
	}
	var cells []cell
	sel, err := s.selected(ctx, tenantID, q, false)
	if err != nil {
		return nil, err
	}
	err = sel.Select(l + " AS l, " + i + " AS i, COUNT(*) AS n").
		Group(l + ", " + i).Scan(&cells).Error
	if err != nil {
		return nil, fmt.Errorf("risk heat map: %w", err)
	}
	return heatmapOf(cells), nil
}
