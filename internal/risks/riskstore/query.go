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
// paged says the statement reads a page in an index's order. walk, on SQLite, has
// q's words matched on each row the page's index walk reaches, up to and including
// walk.End when set, rather than read as the set of risks_search's matches
// (containing).
func (s *Store) selected(ctx context.Context, tenantID string, q risks.Query, paged bool, walk *walkTo) (*gorm.DB, error) {
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
	// The whole value in any letter case (docs/register.md): no index answers these
	// filters either way (they are costly reads), so folding the column costs nothing
	// more. SQLite's lower() folds ASCII letters only; PostgreSQL's every letter.
	db = where(db, "lower(category) = lower(?)", q.Category)
	db = where(db, "lower(owner) = lower(?)", q.Owner)
	db = where(db, "owner_user_id = ?", q.OwnerUserID)
	db = where(db, "risk_score >= ?", q.MinScore)
	db = where(db, "risk_score <= ?", q.MaxScore)
	db = whereFactors(db, q, plus)
	db = where(db, "review_date < ?", q.ReviewBefore)
	db = where(db, "created_at >= ?", q.CreatedSince)
	db = where(db, "created_at < ?", q.CreatedUntil)
	db = where(db, "updated_at >= ?", q.UpdatedSince)
	if q.OutsideAppetite != nil {
		if *q.OutsideAppetite {
			db = db.Where("risk_score IS NOT NULL AND " + OutsideAppetiteSQL)
		} else {
			db = db.Where("NOT COALESCE(" + OutsideAppetiteSQL + ", 1 = 0)")
		}
	}
	for k, v := range q.Metadata {
		// Keys are [A-Za-z0-9_.-] (risks.ValidMetadataKey): safe inside the path.
		if s.postgres() {
			db = db.Where("(metadata::jsonb ->> ?) = ?", k, v)
		} else {
			db = db.Where("json_extract(metadata, ?) = ?", `$."`+k+`"`, v)
		}
	}
	// Last: on SQLite's walk the other filters are checked before a row is probed.
	return s.containing(db, tenantID, q.Words, walk), nil
}

// OutsideAppetiteSQL is true of a row of risks whose risk_score is above its
// category's appetite (in any letter case), else its tenant's; NULL when neither is
// set or it has no score (migration 0026, internal/appetite). It is checked row by
// row: the filter is a costly read.
const OutsideAppetiteSQL = `risks.risk_score > COALESCE(
	(SELECT ca.appetite FROM category_appetites ca WHERE ca.tenant_id = risks.tenant_id AND lower(ca.category) = lower(risks.category)),
	(SELECT t.risk_appetite FROM tenants t WHERE t.id = risks.tenant_id))`

// walkTo is how a page's walk of its index ends: at End, in Sorted's order, or at
// the end of the tenant's rows when End is nil.
type walkTo struct {
	Sorted database.Sorted
	End    *database.After
}

// factorColumns are the columns of Query's Likelihoods, Impacts, ResidualLikelihoods
// and ResidualImpacts, in that order.
var factorColumns = [...]string{"likelihood", "impact", "residual_likelihood", "residual_impact"}

// whereFactors adds q's factor filters (Likelihoods, Impacts, ResidualLikelihoods,
// ResidualImpacts) on their columns, each prefixed by plus ("+" keeps SQLite off an
// index); the risks table and risk_heat_counts name them alike.
func whereFactors(db *gorm.DB, q risks.Query, plus string) *gorm.DB {
	for i, vs := range [][]int{q.Likelihoods, q.Impacts, q.ResidualLikelihoods, q.ResidualImpacts} {
		if len(vs) > 0 {
			db = db.Where(plus+factorColumns[i]+" IN ?", vs)
		}
	}
	return db
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
// index risks_search matches them (each a quoted phrase, all required) among the
// tenant's entries alone (tenantEntries), in one of two ways that select the same
// rows (docs/register.md):
//
//   - walk nil: the set of the tenant's rowids risks_search matches, read whole;
//   - walk set (ASCII words only, List decides): per row, as the page's own index
//     walk reaches it, up to walk.End: LIKE on a row of ASCII text (where LIKE's
//     ASCII case folding is the index's), a probe of risks_search for that row's
//     entry on any other row.
func (s *Store) containing(db *gorm.DB, tenantID string, words []string, walk *walkTo) *gorm.DB {
	var phrases, likes []string
	var args []any
	for _, w := range words {
		pattern := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(w) + "%"
		switch {
		case s.postgres():
			db = db.Where(`(title ILIKE ? ESCAPE '\' OR description ILIKE ? ESCAPE '\')`, pattern, pattern)
		case utf8.RuneCountInString(w) >= 3:
			phrases = append(phrases, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
			likes = append(likes, `(title LIKE ? ESCAPE '\' OR description LIKE ? ESCAPE '\')`)
			args = append(args, pattern, pattern)
		default:
			db = db.Where(`(title LIKE ? ESCAPE '\' OR description LIKE ? ESCAPE '\')`, pattern, pattern)
		}
	}
	if len(phrases) == 0 {
		return db
	}
	match := matchOf(words)
	if walk == nil {
		return db.Where("rowid IN (SELECT rowid & "+entryMask+" FROM risks_search WHERE risks_search MATCH ? AND "+
			tenantEntries+")", match, tenantID, tenantID)
	}
	if walk.End != nil {
		cond, bound := walk.Sorted.Through(*walk.End)
		db = db.Where(cond, bound...)
	}
	return db.Where("(("+strings.Join(likes, " AND ")+") OR ("+notASCII+
		" AND EXISTS (SELECT 1 FROM risks_search WHERE risks_search MATCH ? AND risks_search.rowid = "+
		tenantBase+" + risks.rowid)))",
		append(args, match, tenantID)...)
}

// risks_search's rowids (migration 0017_search_per_tenant): a risk's entry is at
// its tenant's rowid times 2^40 plus its own rowid, so a tenant's entries are one
// range, and FTS5 reads a match restricted to a range of rowids by seeking to its
// start in each term's list: the other tenants' entries are never read.
const (
	// tenantBase is the first rowid of the tenant's entries; its argument is the
	// tenant's id.
	tenantBase = "((SELECT rowid FROM tenants WHERE id = ?) << 40)"
	// tenantEntries restricts risks_search to the tenant's entries; its arguments
	// are the tenant's id, twice.
	tenantEntries = "risks_search.rowid BETWEEN " + tenantBase + " AND " + tenantBase + " + " + entryMask
	// entryMask keeps a risk's rowid of its entry's.
	entryMask = "1099511627775"
)

// matchOf is the risks_search query of words: each of three characters or more as a
// quoted phrase, all required.
func matchOf(words []string) string {
	var phrases []string
	for _, w := range words {
		if utf8.RuneCountInString(w) >= 3 {
			phrases = append(phrases, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
		}
	}
	return strings.Join(phrases, " ")
}

// walks reports whether a page of a search for words may be read by a walk of its
// index on this store (containing): SQLite, with a word of three characters or more
// for risks_search, all of them ASCII.
func (s *Store) walks(words []string) bool {
	if s.postgres() {
		return false
	}
	indexed := false
	for _, w := range words {
		if utf8.RuneCountInString(w) >= 3 {
			indexed = true
			if !isASCII(w) {
				return false
			}
		}
	}
	return indexed
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

// walkWindow is how many of the tenant's rows, in a page's order, the long walk of a
// q search on SQLite reaches before it reads the set of risks_search's matches instead
// (List): about 30 ms for 10,000 rows at 1,000,000, and it finds a page of words in
// more than one row in 500 (21 of 10,000). No count over the tenant's matches
// decides: counting even a thousand of them cost 38 ms in a tenant of 1,000,000
// rows and 2.5 s in a small tenant beside it, whose matches risks_fts yields after
// the big tenant's (docs/performance.md).
const walkWindow = 10_000

// firstWalk is how many rows the first, short walk of a q search on SQLite reaches:
// a page of words in more than one row in 50 (List).
const firstWalk = 1_000

// fewMatches is how many matches of q in the tenant make the set of matches cheaper
// to read than a long walk (List); counting them stops there.
const fewMatches = 500

// window is how many rows a walk reaches: walkWindow unless a test set another.
func (s *Store) window() int {
	if s.walkWindow > 0 {
		return s.walkWindow
	}
	return walkWindow
}

// sorted is the keyset order of sort on this store. Titles sort by code point on
// both stores (COLLATE "C" on PostgreSQL, SQLite's BINARY), so both list alike.
func (s *Store) sorted(sort risks.Sort) database.Sorted {
	out := database.Sorted{Desc: sort.Desc}
	switch sort.Field {
	case risks.SortUpdatedAt:
		out.Column = "updated_at"
	case risks.SortRiskScore:
		out.Column, out.Nullable = "risk_score", true
	case risks.SortResidualScore:
		out.Column, out.Nullable = "residual_score", true
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
//
// On SQLite a q search of ASCII words first walks the page's index through the next
// firstWalk rows (containing); when that finds a full page, or the tenant has no
// more rows, that is the page. Otherwise, when risks_search matches fewer than
// fewMatches risks of the tenant, the page is read from that set of matches; else a
// walk of walkWindow rows is tried, then the set of matches. Both read the same rows in the same order, so a page is the
// same either way and paging visits each match once.
func (s *Store) List(ctx context.Context, tenantID string, f risks.Filter) ([]*risks.Risk, bool, error) {
	var after *database.After
	if f.After != nil {
		after = &database.After{Key: f.After.Key, ID: f.After.ID}
	}
	sorted := s.sorted(f.Sort)
	if s.walks(f.Query.Words) {
		// A short walk finds a page of common words; words that few risks of any
		// tenant hold are read as the set of their matches; the others get the
		// long walk first.
		out, more, done, err := s.walkPage(ctx, tenantID, f, sorted, after, min(firstWalk, s.window()))
		if err != nil || done {
			return out, more, err
		}
		few, err := s.fewMatches(ctx, tenantID, f.Query.Words)
		if err != nil {
			return nil, false, err
		}
		if !few {
			out, more, done, err := s.walkPage(ctx, tenantID, f, sorted, after, s.window())
			if err != nil || done {
				return out, more, err
			}
		}
	}
	sel, err := s.selected(ctx, tenantID, f.Query, true, nil)
	if err != nil {
		return nil, false, err
	}
	out, more, err := database.PageSorted(sel, sorted, after, f.Limit, toRisk)
	if err != nil {
		return nil, false, fmt.Errorf("list risks: %w", err)
	}
	return out, more, nil
}

// fewMatches reports whether risks_search matches words (the ASCII words of a walk)
// in fewer than fewMatches risks of the tenant, counting no further.
func (s *Store) fewMatches(ctx context.Context, tenantID string, words []string) (bool, error) {
	var n int64
	found := database.Conn(ctx, s.db).Table("risks_search").Select("1").
		Where("risks_search MATCH ? AND "+tenantEntries, matchOf(words), tenantID, tenantID).Limit(fewMatches)
	if err := database.Conn(ctx, s.db).Table("(?) AS found", found).Count(&n).Error; err != nil {
		return false, fmt.Errorf("count risks matching q: %w", err)
	}
	return n < fewMatches, nil
}

// walkPage reads f's page by a walk of the next window rows of the tenant in
// sorted's order (List); done is false when the walk cannot tell the page: fewer
// than a page's matches within the window, or a window ending at a NULL key (a
// bound the index cannot stop at).
func (s *Store) walkPage(ctx context.Context, tenantID string, f risks.Filter, sorted database.Sorted, after *database.After, window int) ([]*risks.Risk, bool, bool, error) {
	ctx = database.MayLag(ctx)
	end, err := database.NthSorted[row](s.tenant(ctx, tenantID).Model(&row{}).Select(sorted.Column+", id"),
		sorted, after, window)
	if err != nil {
		return nil, false, false, fmt.Errorf("list risks: end of the walk: %w", err)
	}
	walk := &walkTo{Sorted: sorted}
	if end != nil {
		key := f.Sort.Key(toRisk(end))
		if key == nil {
			return nil, false, false, nil
		}
		walk.End = &database.After{Key: key, ID: end.ID}
	}
	sel, err := s.selected(ctx, tenantID, f.Query, true, walk)
	if err != nil {
		return nil, false, false, err
	}
	out, more, err := database.PageSorted(sel, sorted, after, f.Limit, toRisk)
	if err != nil {
		return nil, false, false, fmt.Errorf("list risks: %w", err)
	}
	if more || walk.End == nil {
		return out, more, true, nil
	}
	return nil, false, false, nil
}

// Heatmap counts the risks q selects by the likelihood and impact of basis. When q
// filters on nothing but statuses and treatments it sums the tenant's rows of
// risk_heat_counts, whose size does not grow with the tenant's risks (countedHeatmap);
// any other filter counts the selected risks in one grouped statement
// (scannedHeatmap). Like a list, it may read a replica that is behind
// (database.MayLag; docs/deploying.md, Replicas).
func (s *Store) Heatmap(ctx context.Context, tenantID string, q risks.Query, basis risks.Basis) (*risks.Heatmap, error) {
	ctx = database.MayLag(ctx)
	// The counts include a pending import's risks (its rows' triggers add them):
	// while the tenant may have one, the heat map counts the rows it may see.
	if countable(q) && !database.ImportPending(tenantID) {
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
	sel, err := s.selected(ctx, tenantID, q, false, nil)
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

// movesBatch bounds the IDs one statement of Factors names.
const movesBatch = 500

// Factors returns the basis' factors now of the risks among ids that q selects
// (docs/register.md, "Moved since"): a heat map's risks that moved. Read by
// primary key, movesBatch at a time, each row checked against q's filters.
func (s *Store) Factors(ctx context.Context, tenantID string, q risks.Query, basis risks.Basis, ids []string) (map[string]risks.Now, error) {
	l, i := "likelihood", "impact"
	if basis == risks.BasisResidual {
		l, i = "residual_likelihood", "residual_impact"
	}
	out := make(map[string]risks.Now, len(ids))
	for start := 0; start < len(ids); start += movesBatch {
		batch := ids[start:min(start+movesBatch, len(ids))]
		sel, err := s.selected(ctx, tenantID, q, false, nil)
		if err != nil {
			return nil, err
		}
		var rows []struct {
			ID   string
			L, I *int
		}
		if err := sel.Where("risks.id IN ?", batch).Select("risks.id AS id, " + l + " AS l, " + i + " AS i").Scan(&rows).Error; err != nil {
			return nil, fmt.Errorf("risk factors: %w", err)
		}
		for _, r := range rows {
			out[r.ID] = risks.Now{Likelihood: r.L, Impact: r.I}
		}
	}
	return out, nil
}
