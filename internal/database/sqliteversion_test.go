package database_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/database"
)

// The embedded SQLite is a current release (modernc.org/sqlite of 2026, under
// glebarez/sqlite's GORM dialector: issue 27 found 3.41.2 of 2023 pinned), with
// the FTS5 trigram tokenizer the register's search uses (docs/register.md).
func TestSQLiteIsCurrent(t *testing.T) {
	t.Parallel()
	db, err := database.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "v.db"), database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	if err := db.Raw("SELECT sqlite_version()").Scan(&v).Error; err != nil {
		t.Fatal(err)
	}
	major, rest, _ := strings.Cut(v, ".")
	minor, _ := strconv.Atoi(strings.Split(rest, ".")[0])
	if major != "3" || minor < 50 {
		t.Errorf("sqlite_version() = %s, want 3.50 or later", v)
	}
	if err := db.Exec("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')").Error; err != nil {
		t.Errorf("FTS5 trigram: %v", err)
	}
}
