package riskstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// statements is a GORM logger that keeps the SQL of every statement, values inlined.
type statements struct {
	logger.Interface
	sql []string
}

func (l *statements) Trace(_ context.Context, _ time.Time, fc func() (string, int64), _ error) {
	sql, _ := fc()
	l.sql = append(l.sql, sql)
}

// explain logs the plan of each statement call sends on s's store: EXPLAIN on
// PostgreSQL, EXPLAIN QUERY PLAN on SQLite (docs/register.md names the index each
// query should use; BenchmarkRegisterQueries -v shows the one it does use).
func explain(b *testing.B, s *Store, name string, call func(*Store) error) {
	b.Helper()
	rec := &statements{Interface: logger.Discard}
	traced := &Store{db: s.db.Session(&gorm.Session{Logger: rec}), point: s.point}
	if err := call(traced); err != nil {
		b.Fatal(err)
	}
	prefix := "EXPLAIN QUERY PLAN "
	if s.postgres() {
		prefix = "EXPLAIN "
	}
	var out strings.Builder
	for _, sql := range rec.sql {
		fmt.Fprintf(&out, "\n%s\n", sql)
		rows, err := s.db.Raw(prefix + sql).Rows()
		if err != nil {
			b.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(&out, "  %v\n", vals[len(vals)-1])
		}
		rows.Close()
	}
	b.Logf("plan of %s:%s", name, out.String())
}
