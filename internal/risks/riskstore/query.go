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
func (s *Store) selected(ctx context.Context, tenantID string, q risks.Query) *gorm.DB {
	db := s.tenant(ctx, tenantID).Model(&row{})
	if len(q.Statuses) > 0 {
		db = db.Where("status IN ?", q.Statuses)
	}
	if len(q.Treatments) > 0 {
		db = db.Where("treatment IN ?", q.Treatments)
	}
	db = where(db, "category = ?", q.Category)
	db = where(db, "owner = ?", q.Owner)
	db = where(db, "risk_score >= ?", q.MinScore)
	db = where(db, "risk_score <= ?", q.MaxScore)
	db = where(db, "review_date < ?", q.ReviewBefore)
	db = where(db, "created_at >= ?", q.CreatedSince)
	db = where(db, "created_at < ?", q.CreatedUntil)
	db = where(db, "updated_at >= ?", q.UpdatedSince)
	db = s.containing(db, q.Words)
	for k, v := range q.Metadata {
		// Keys are [A-Za-z0-9_.-] (risks.ValidMetadataKey): safe inside the path.
		if s.postgres() {
			db = db.Where("(metadata::jsonb ->> ?) = ?", k, v)
		} else {
			db = db.Where("json_extract(metadata, ?) = ?", `$."`+k+`"`, v)
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
// case-insensitive. PostgreSQL: ILIKE per word, served by the pg_trgm GIN indexes;
// SQLite: one MATCH of the FTS5 trigram index risks_fts for the words of three
// characters or more (each a quoted phrase, all required), LIKE for shorter ones,
// which a trigram index cannot answer (ASCII case folding only).
func (s *Store) containing(db *gorm.DB, words []string) *gorm.DB {
	var phrases []string
	for _, w := range words {
		pattern := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(w) + "%"
		switch {
		case s.postgres():
			db = db.Where(`(title ILIKE ? ESCAPE '\' OR description ILIKE ? ESCAPE '\')`, pattern, pattern)
		case utf8.RuneCountInString(w) >= 3:
			phrases = append(phrases, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
		default:
			db = db.Where(`(title LIKE ? ESCAPE '\' OR description LIKE ? ESCAPE '\')`, pattern, pattern)
		}
	}
	if len(phrases) > 0 {
		db = db.Where("rowid IN (SELECT rowid FROM risks_fts WHERE risks_fts MATCH ?)", strings.Join(phrases, " "))
	}
	return db
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
	out, more, err := database.PageSorted(s.selected(ctx, tenantID, f.Query), s.sorted(f.Sort), after, f.Limit, toRisk)
	if err != nil {
		return nil, false, fmt.Errorf("list risks: %w", err)
	}
	return out, more, nil
}

// Heatmap counts the risks q selects by the likelihood and impact of basis, in one
// grouped statement. Like a list, it may read a replica that is behind
// (database.MayLag; docs/deploying.md, Replicas).
func (s *Store) Heatmap(ctx context.Context, tenantID string, q risks.Query, basis risks.Basis) (*risks.Heatmap, error) {
	ctx = database.MayLag(ctx)
	l, i := "likelihood", "impact"
	if basis == risks.BasisResidual {
		l, i = "residual_likelihood", "residual_impact"
	}
	var cells []struct {
		L, I *int
		N    int
	}
	err := s.selected(ctx, tenantID, q).Select(l + " AS l, " + i + " AS i, COUNT(*) AS n").
		Group(l + ", " + i).Scan(&cells).Error
	if err != nil {
		return nil, fmt.Errorf("risk heat map: %w", err)
	}
	var h risks.Heatmap
	for _, c := range cells {
		if c.L == nil || c.I == nil || *c.L < 1 || *c.L > 5 || *c.I < 1 || *c.I > 5 {
			h.Unassessed += c.N
			continue
		}
		h.Counts[*c.L-1][*c.I-1] += c.N
	}
	return &h, nil
}
