package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0017SearchPerTenant replaces SQLite's search index, risks_fts, shared by every
// tenant, with risks_search, whose rows are keyed by tenant: the rowid of a risk's
// entry is its tenant's rowid times 2^40 plus the risk's rowid, so one tenant's
// entries are one range of rowids, and a search restricted to that range (FTS5
// seeks to a range's start in each term's list) reads that tenant's entries alone:
// its cost no longer depends on how many of another tenant's risks hold the word
// (docs/register.md). The table is contentless (its rowids are no risk's): triggers
// give it each risk's text, and deletions the old text. PostgreSQL is unchanged:
// its trigram indexes are read together with the tenant's rows.
var m0017SearchPerTenant = &gormigrate.Migration{
	ID: "0017_search_per_tenant",
	Migrate: func(tx *gorm.DB) error {
		if tx.Dialector.Name() == "postgres" {
			return nil
		}
		return execAll(tx, searchPerTenant)
	},
	Rollback: func(tx *gorm.DB) error {
		if tx.Dialector.Name() == "postgres" {
			return nil
		}
		return execAll(tx, append([]string{`DROP TRIGGER risks_search_ai`, `DROP TRIGGER risks_search_ad`,
			`DROP TRIGGER risks_search_au`, `DROP TABLE risks_search`}, sqliteRegister[1:]...))
	},
}

// searchKey is the rowid of a risk's entry in risks_search, in a trigger on risks
// (row is new or old).
func searchKey(row string) string {
	return `(((SELECT rowid FROM tenants WHERE id = ` + row + `.tenant_id) << 40) + ` + row + `.rowid)`
}

var searchPerTenant = []string{
	`DROP TRIGGER risks_fts_ai`, `DROP TRIGGER risks_fts_ad`, `DROP TRIGGER risks_fts_au`, `DROP TABLE risks_fts`,
	`CREATE VIRTUAL TABLE risks_search USING fts5(title, description, content='', tokenize='trigram')`,
	`CREATE TRIGGER risks_search_ai AFTER INSERT ON risks BEGIN
		INSERT INTO risks_search(rowid, title, description) VALUES (` + searchKey("new") + `, new.title, new.description);
	END`,
	`CREATE TRIGGER risks_search_ad AFTER DELETE ON risks BEGIN
		INSERT INTO risks_search(risks_search, rowid, title, description) VALUES ('delete', ` + searchKey("old") + `, old.title, old.description);
	END`,
	`CREATE TRIGGER risks_search_au AFTER UPDATE OF title, description ON risks BEGIN
		INSERT INTO risks_search(risks_search, rowid, title, description) VALUES ('delete', ` + searchKey("old") + `, old.title, old.description);
		INSERT INTO risks_search(rowid, title, description) VALUES (` + searchKey("new") + `, new.title, new.description);
	END`,
	`INSERT INTO risks_search(rowid, title, description)
		SELECT (t.rowid << 40) + r.rowid, r.title, r.description FROM risks r JOIN tenants t ON t.id = r.tenant_id`,
}

// execAll runs stmts in order.
func execAll(tx *gorm.DB, stmts []string) error {
	for _, s := range stmts {
		if err := tx.Exec(s).Error; err != nil {
			return err
		}
	}
	return nil
}
