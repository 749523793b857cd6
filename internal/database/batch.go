package database

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// maxParams is how many `?` one statement may carry on both stores: SQLite's
// SQLITE_MAX_VARIABLE_NUMBER (32,766) and PostgreSQL's 65,535, with room to spare.
const maxParams = 30_000

// BatchRows is how many rows of cols columns InsertRows puts in one statement.
func BatchRows(cols int) int { return max(1, min(1000, maxParams/cols)) }

// InsertRows inserts rows (each one value per column of cols, in order) into table
// through Conn, as few multi-row INSERTs as the stores' parameter limits allow
// (BatchRows per statement): a batch write (an import) sends one statement per
// thousand rows instead of one per row. Errors: the store's, naming the table.
func InsertRows(ctx context.Context, db *gorm.DB, table string, cols []string, rows [][]any) error {
	per := BatchRows(len(cols))
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
