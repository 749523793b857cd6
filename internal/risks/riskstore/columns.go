package riskstore

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"sync"

	"gorm.io/gorm/schema"
)

// The column lists every write uses, derived from row once: a field added to row is
// inserted by Create (both dialects) and CreateMany and stored by Update without being
// named anywhere else (docs/architecture.md, "Adding things"). Reads take every column
// of the table (GORM's SELECT *), so they need no list.
var (
	// rowSchema is GORM's reading of row (its column names by GORM's default naming,
	// the one database.Open keeps), the source of every list below.
	rowSchema = mustParse(&row{})
	// columns are every column of row, in its fields' order: what Create and
	// CreateMany insert.
	columns = rowSchema.DBNames
	// updatedColumns are what Update stores: every column but those no change alters.
	updatedColumns = slices.DeleteFunc(slices.Clone(columns), func(c string) bool {
		return slices.Contains(unchangingColumns, c)
	})
	// insertSQL is Create's INSERT on PostgreSQL, one placeholder per column.
	insertSQL = "INSERT INTO risks (" + strings.Join(columns, ", ") + ") VALUES (" +
		strings.TrimSuffix(strings.Repeat("?, ", len(columns)), ", ") + ")"
)

// unchangingColumns are the columns set once, at creation: a risk's identity, its
// tenant and when it was created. Update leaves them out, so that no update can move
// a risk to another tenant even by mistake.
var unchangingColumns = []string{"id", "tenant_id", "created_at"}

// mustParse is GORM's schema of the row type r. It fails only for a type GORM cannot
// map, which is a programming error found by any test of this package.
func mustParse(r any) *schema.Schema {
	s, err := schema.Parse(r, &sync.Map{}, schema.NamingStrategy{})
	if err != nil {
		panic("riskstore: " + err.Error())
	}
	return s
}

// values are w's values in columns' order.
func values(w *row) []any {
	v := reflect.ValueOf(w).Elem()
	out := make([]any, len(columns))
	for i, c := range columns {
		out[i], _ = rowSchema.FieldsByDBName[c].ValueOf(context.Background(), v)
	}
	return out
}
