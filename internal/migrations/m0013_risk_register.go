package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0013RiskRegister adds the register's fields (docs/register.md) — treatment,
// review date, residual assessment, metadata — and the indexes lists, search and
// sorts read through. Existing risks get none of the new values (null, metadata {}).
var m0013RiskRegister = &gormigrate.Migration{
	ID: "0013_risk_register",
	Migrate: func(tx *gorm.DB) error {
		stmts := []string{
			`ALTER TABLE risks ADD COLUMN treatment VARCHAR(20)`,
			`ALTER TABLE risks ADD COLUMN review_date VARCHAR(10)`,
			`ALTER TABLE risks ADD COLUMN residual_likelihood INTEGER`,
			`ALTER TABLE risks ADD COLUMN residual_impact INTEGER`,
			`ALTER TABLE risks ADD COLUMN residual_score INTEGER`,
			`ALTER TABLE risks ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}'`,
			`CREATE INDEX idx_risks_tenant_created ON risks (tenant_id, created_at, id)`,
			`CREATE INDEX idx_risks_tenant_updated ON risks (tenant_id, updated_at, id)`,
			`CREATE INDEX idx_risks_tenant_score ON risks (tenant_id, risk_score, id)`,
			`CREATE INDEX idx_risks_tenant_review ON risks (tenant_id, review_date, id)`,
		}
		if tx.Dialector.Name() == "postgres" {
			stmts = append(stmts,
				`CREATE INDEX idx_risks_tenant_title ON risks (tenant_id, title COLLATE "C", id)`,
				// Descending with NULLs last, as lists sort: the ascending index read
				// backwards would give NULLs first (SQLite's backward read already does).
				`CREATE INDEX idx_risks_tenant_score_desc ON risks (tenant_id, risk_score DESC NULLS LAST, id DESC)`,
				`CREATE INDEX idx_risks_tenant_review_desc ON risks (tenant_id, review_date DESC NULLS LAST, id DESC)`,
				`CREATE EXTENSION IF NOT EXISTS pg_trgm`,
				`CREATE INDEX idx_risks_title_trgm ON risks USING gin (title gin_trgm_ops)`,
				`CREATE INDEX idx_risks_description_trgm ON risks USING gin (description gin_trgm_ops)`)
		} else {
			stmts = append(stmts, sqliteRegister...)
		}
		for _, s := range stmts {
			if err := tx.Exec(s).Error; err != nil {
				return err
			}
		}
		return nil
	},
	Rollback: func(tx *gorm.DB) error {
		stmts := []string{`DROP INDEX idx_risks_tenant_created`, `DROP INDEX idx_risks_tenant_updated`,
			`DROP INDEX idx_risks_tenant_score`, `DROP INDEX idx_risks_tenant_review`,
			`DROP INDEX idx_risks_tenant_title`}
		if tx.Dialector.Name() == "postgres" {
			stmts = append(stmts, `DROP INDEX idx_risks_title_trgm`, `DROP INDEX idx_risks_description_trgm`,
				`DROP INDEX idx_risks_tenant_score_desc`, `DROP INDEX idx_risks_tenant_review_desc`)
		} else {
			stmts = append(stmts, `DROP TRIGGER risks_fts_ai`, `DROP TRIGGER risks_fts_ad`,
				`DROP TRIGGER risks_fts_au`, `DROP TABLE risks_fts`)
		}
		for _, c := range []string{"treatment", "review_date", "residual_likelihood", "residual_impact",
			"residual_score", "metadata"} {
			stmts = append(stmts, `ALTER TABLE risks DROP COLUMN `+c)
		}
		for _, s := range stmts {
			if err := tx.Exec(s).Error; err != nil {
				return err
			}
		}
		return nil
	},
}

// sqliteRegister: the title index, the FTS5 trigram index of titles and descriptions
// (an external-content table over risks' rowids, kept by triggers, built once for
// the rows already there).
var sqliteRegister = []string{
	`CREATE INDEX idx_risks_tenant_title ON risks (tenant_id, title, id)`,
	`CREATE VIRTUAL TABLE risks_fts USING fts5(title, description, content='risks', tokenize='trigram')`,
	`CREATE TRIGGER risks_fts_ai AFTER INSERT ON risks BEGIN
		INSERT INTO risks_fts(rowid, title, description) VALUES (new.rowid, new.title, new.description);
	END`,
	`CREATE TRIGGER risks_fts_ad AFTER DELETE ON risks BEGIN
		INSERT INTO risks_fts(risks_fts, rowid, title, description) VALUES ('delete', old.rowid, old.title, old.description);
	END`,
	`CREATE TRIGGER risks_fts_au AFTER UPDATE OF title, description ON risks BEGIN
		INSERT INTO risks_fts(risks_fts, rowid, title, description) VALUES ('delete', old.rowid, old.title, old.description);
		INSERT INTO risks_fts(rowid, title, description) VALUES (new.rowid, new.title, new.description);
	END`,
	`INSERT INTO risks_fts(risks_fts) VALUES ('rebuild')`,
}
