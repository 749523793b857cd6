package database

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// BatchParams is how many `?` one multi-row statement of InsertRows carries on db's
// store. PostgreSQL: 30,000, under its limit of 65,535. SQLite: 1,000, far under
// its 32,766, because the driver (glebarez/go-sqlite) binds each parameter after a
// linear search of the arguments, so a statement of n parameters costs n²/2
// comparisons: a statement of 20,000 took about 10 ms per row it carried, and
// 1,000 parameters make that negligible beside the insert (docs/performance.md).
func BatchParams(db *gorm.DB) int {
	if db.Dialector.Name() == string(Postgres) {
		return 30_000
	}
	return 1_000
}

// BatchRows is how many rows of cols columns InsertRows puts in one statement on
// db's store (BatchParams), at most 1,000.
func BatchRows(db *gorm.DB, cols int) int { return max(1, min(1000, BatchParams(db)/cols)) }

// InsertRows inserts rows (each one value per column of cols, in order) into table
// through Conn, as few multi-row INSERTs as the stores' parameter limits allow
// (BatchRows per statement): a batch write (an import) sends one statement per
// thousand rows instead of one per row. Errors: the store's, naming the table.
func InsertRows(ctx context.Context, db *gorm.DB, table string, cols []string, rows [][]any) error {
	if id := ImportOf(ctx); id != "" && MarkedTables[table] {
		// An import's row, hidden until the import is published (pending.go).
		cols = append(cols[:len(cols):len(cols)], "import_id")
		marked := make([][]any, len(rows))
		for i, r := range rows {
			marked[i] = append(r[:len(r):len(r)], id)
		}
		rows = marked
	}
	per := BatchRows(db, len(cols))
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",") + ")"
	head := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES "
	for start := 0; start < len(rows); start += per {
		chunk := rows[start:min(start+per, len(rows))]
		args := make([]any, 0, len(chunk)*len(cols))
		for _, r := range chunk {
			if len(r) != len(cols) {
				return fmt.Errorf("insert into %s: a row of %d values for %d columns", table, len(r), len(cols))
			}
			args = append(args, r...)
		}
		stmt := head + strings.TrimSuffix(strings.Repeat(one+",", len(chunk)), ",")
		if err := Conn(ctx, db).Exec(stmt, args...).Error; err != nil {
			return fmt.Errorf("insert into %s: %w", table, err)
		}
	}
	return nil
}
