package migrations

import (
	"strings"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0016HeatCounts adds risk_heat_counts, a tenant's risks counted by status,
// treatment and both assessments, kept by triggers on risks in the transaction of
// every statement that inserts, updates or deletes a risk, whatever path it takes
// (create, PATCH, delete, import, a seed, a cascade). The heat map reads it instead
// of counting the tenant's rows (docs/performance.md, "The register at size";
// docs/architecture.md, "Where the rules live").
//
// A missing treatment is stored as ” and a missing likelihood, impact or residual
// value as 0, so that the columns are NOT NULL and one unique index tells the rows
// of a key apart on every PostgreSQL version.
//
// PostgreSQL: each write inserts delta rows (+1 for the risk as it is after, −1 as
// it was before; folded false), so concurrent writers of one tenant never update,
// and never wait on, one counter row. riskstore.Store.FoldHeatCounts folds a bounded
// batch of deltas into the one folded row of their key (the sweep runs it). SQLite
// has one writer, which no counter row can slow further: its triggers add to the
// folded row in place and leave no deltas. Readers SUM a tenant's rows either way.
//
// Rows already stored are counted once, after the triggers exist: on PostgreSQL the
// table lock CREATE TRIGGER takes holds every writer off until this transaction
// commits, so no write is counted twice or missed.
var m0016HeatCounts = &gormigrate.Migration{
	ID: "0016_heat_counts",
	Migrate: func(tx *gorm.DB) error {
		stmts := sqliteHeatCounts
		if tx.Dialector.Name() == "postgres" {
			stmts = postgresHeatCounts
		}
		stmts = append(append([]string{}, stmts...), heatCountsBackfill)
		for _, s := range stmts {
			if err := tx.Exec(s).Error; err != nil {
				return err
			}
		}
		return nil
	},
	Rollback: func(tx *gorm.DB) error {
		stmts := []string{`DROP TRIGGER risks_heat_ai`, `DROP TRIGGER risks_heat_ad`, `DROP TRIGGER risks_heat_au`,
			`DROP TABLE risk_heat_counts`}
		if tx.Dialector.Name() == "postgres" {
			stmts = []string{`DROP TRIGGER risks_heat_ai ON risks`, `DROP TRIGGER risks_heat_ad ON risks`,
				`DROP TRIGGER risks_heat_au ON risks`, `DROP FUNCTION risks_heat_count()`, `DROP TABLE risk_heat_counts`}
		}
		for _, s := range stmts {
			if err := tx.Exec(s).Error; err != nil {
				return err
			}
		}
		return nil
	},
}

// heatCountsTable is the table on both stores (id: BIGSERIAL or SQLite's rowid).
// idx_risk_heat_counts_tenant serves the heat map's read (an index-only scan on
// PostgreSQL, a covering index on SQLite); idx_risk_heat_counts_key is the one
// folded row of each key, which folds and SQLite's triggers add to.
func heatCountsTable(id string) []string {
	return []string{
		`CREATE TABLE risk_heat_counts (
			id ` + id + `,
			tenant_id VARCHAR(40) NOT NULL,
			status VARCHAR(20) NOT NULL,
			treatment VARCHAR(20) NOT NULL,
			likelihood INTEGER NOT NULL,
			impact INTEGER NOT NULL,
			residual_likelihood INTEGER NOT NULL,
			residual_impact INTEGER NOT NULL,
			n BIGINT NOT NULL,
			folded BOOLEAN NOT NULL DEFAULT FALSE)`,
		`CREATE INDEX idx_risk_heat_counts_tenant ON risk_heat_counts (tenant_id, status, treatment,
			likelihood, impact, residual_likelihood, residual_impact, n)`,
		`CREATE UNIQUE INDEX idx_risk_heat_counts_key ON risk_heat_counts (tenant_id, status, treatment,
			likelihood, impact, residual_likelihood, residual_impact) WHERE folded`,
	}
}

// heatKeyChanged holds when an update moves a risk to another row of the counts;
// distinct is the store's null-safe "not equal" (SQLite's IS NOT).
func heatKeyChanged(distinct string) string {
	var out []string
	for _, c := range []string{"tenant_id", "status", "treatment", "likelihood", "impact",
		"residual_likelihood", "residual_impact"} {
		out = append(out, "OLD."+c+" "+distinct+" NEW."+c)
	}
	return strings.Join(out, " OR ")
}

var postgresHeatCounts = append(heatCountsTable("BIGSERIAL PRIMARY KEY"),
	// The deltas a fold picks, oldest first.
	`CREATE INDEX idx_risk_heat_counts_deltas ON risk_heat_counts (id) WHERE NOT folded`,
	`CREATE FUNCTION risks_heat_count() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		IF TG_OP <> 'INSERT' THEN
			INSERT INTO risk_heat_counts (tenant_id, status, treatment, likelihood, impact,
				residual_likelihood, residual_impact, n)
			VALUES (OLD.tenant_id, OLD.status, COALESCE(OLD.treatment, ''), COALESCE(OLD.likelihood, 0),
				COALESCE(OLD.impact, 0), COALESCE(OLD.residual_likelihood, 0), COALESCE(OLD.residual_impact, 0), -1);
		END IF;
		IF TG_OP <> 'DELETE' THEN
			INSERT INTO risk_heat_counts (tenant_id, status, treatment, likelihood, impact,
				residual_likelihood, residual_impact, n)
			VALUES (NEW.tenant_id, NEW.status, COALESCE(NEW.treatment, ''), COALESCE(NEW.likelihood, 0),
				COALESCE(NEW.impact, 0), COALESCE(NEW.residual_likelihood, 0), COALESCE(NEW.residual_impact, 0), 1);
		END IF;
		RETURN NULL;
	END $$`,
	// Writers of risks wait here (SHARE ROW EXCLUSIVE) until the backfill commits.
	`CREATE TRIGGER risks_heat_ai AFTER INSERT ON risks FOR EACH ROW EXECUTE FUNCTION risks_heat_count()`,
	`CREATE TRIGGER risks_heat_ad AFTER DELETE ON risks FOR EACH ROW EXECUTE FUNCTION risks_heat_count()`,
	`CREATE TRIGGER risks_heat_au AFTER UPDATE ON risks FOR EACH ROW WHEN (`+heatKeyChanged("IS DISTINCT FROM")+`)
		EXECUTE FUNCTION risks_heat_count()`,
)

// sqliteAdd adds n to the folded row of the risk old or new (which).
func sqliteAdd(which, n string) string {
	return `INSERT INTO risk_heat_counts (tenant_id, status, treatment, likelihood, impact,
			residual_likelihood, residual_impact, n, folded)
		VALUES (` + which + `.tenant_id, ` + which + `.status, COALESCE(` + which + `.treatment, ''),
			COALESCE(` + which + `.likelihood, 0), COALESCE(` + which + `.impact, 0),
			COALESCE(` + which + `.residual_likelihood, 0), COALESCE(` + which + `.residual_impact, 0), ` + n + `, TRUE)
		ON CONFLICT (tenant_id, status, treatment, likelihood, impact, residual_likelihood, residual_impact)
			WHERE folded DO UPDATE SET n = n + excluded.n;`
}

var sqliteHeatCounts = append(heatCountsTable("INTEGER PRIMARY KEY"),
	`CREATE TRIGGER risks_heat_ai AFTER INSERT ON risks BEGIN `+sqliteAdd("new", "1")+` END`,
	`CREATE TRIGGER risks_heat_ad AFTER DELETE ON risks BEGIN `+sqliteAdd("old", "-1")+` END`,
	`CREATE TRIGGER risks_heat_au AFTER UPDATE ON risks WHEN `+heatKeyChanged("IS NOT")+` BEGIN `+
		sqliteAdd("old", "-1")+" "+sqliteAdd("new", "1")+` END`,
)

// heatCountsBackfill counts the risks already stored, as folded rows.
const heatCountsBackfill = `INSERT INTO risk_heat_counts (tenant_id, status, treatment, likelihood, impact,
		residual_likelihood, residual_impact, n, folded)
	SELECT tenant_id, status, COALESCE(treatment, ''), COALESCE(likelihood, 0), COALESCE(impact, 0),
		COALESCE(residual_likelihood, 0), COALESCE(residual_impact, 0), COUNT(*), TRUE
	FROM risks
	GROUP BY tenant_id, status, COALESCE(treatment, ''), COALESCE(likelihood, 0), COALESCE(impact, 0),
		COALESCE(residual_likelihood, 0), COALESCE(residual_impact, 0)`
