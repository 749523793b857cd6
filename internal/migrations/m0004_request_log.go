package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0004RequestLog creates the request log (docs/requests.md) and gives idempotency
// records the id of the request that settled them, for the key inspector.
//
// The log is written for every request, so every index costs every request: the
// table is keyed by (tenant_id, id), the list's newest-first order (ids are
// time-ordered), clustered on SQLite (WITHOUT ROWID), so paging needs no index of
// its own; the idempotency key and outcome indexes are partial, skipped by reads and
// unkeyed writes. The request id cannot be the key: a client may send its own, twice.
var m0004RequestLog = &gormigrate.Migration{
	ID: "0004_request_log",
	Migrate: func(tx *gorm.DB) error {
		stmts := []string{requestLogTable[tx.Dialector.Name()]}
		stmts = append(stmts, requestLogIndexes...)
		// A plain nullable column: records written before it have no request id, and
		// the inspector shows null for them.
		stmts = append(stmts, `ALTER TABLE idempotency_records ADD COLUMN request_id varchar(128)`)
		for _, s := range stmts {
			if err := tx.Exec(s).Error; err != nil {
				return err
			}
		}
		return nil
	},
	Rollback: func(tx *gorm.DB) error {
		if err := tx.Migrator().DropColumn("idempotency_records", "request_id"); err != nil {
			return err
		}
		return tx.Migrator().DropTable("request_log_entries")
	},
}

// requestLogTable is the table's DDL per dialect (GORM's Dialector.Name).
var requestLogTable = map[string]string{
	"sqlite": `CREATE TABLE request_log_entries (
		tenant_id text NOT NULL, id text NOT NULL, request_id text NOT NULL,
		method text NOT NULL, path text NOT NULL, route text NOT NULL,
		status integer NOT NULL, duration_us integer NOT NULL,
		credential_type text NOT NULL, credential_id text NOT NULL,
		idempotency_key text, idempotency_outcome text, error_code text,
		created_at datetime NOT NULL,
		PRIMARY KEY (tenant_id, id)) WITHOUT ROWID`,
	"postgres": `CREATE TABLE request_log_entries (
		tenant_id varchar(40) NOT NULL, id varchar(40) NOT NULL, request_id varchar(128) NOT NULL,
		method varchar(10) NOT NULL, path varchar(512) NOT NULL, route varchar(200) NOT NULL,
		status integer NOT NULL, duration_us bigint NOT NULL,
		credential_type varchar(16) NOT NULL, credential_id varchar(64) NOT NULL,
		idempotency_key varchar(128), idempotency_outcome varchar(32), error_code varchar(64),
		created_at timestamptz NOT NULL,
		PRIMARY KEY (tenant_id, id))`,
}

// requestLogIndexes: each filter of GET /requests is one range of one index, read
// backwards in the list's order (id); created_at alone serves the sweep, which
// deletes across tenants.
var requestLogIndexes = []string{
	`CREATE INDEX idx_request_log_tenant_request ON request_log_entries (tenant_id, request_id)`,
	`CREATE INDEX idx_request_log_tenant_status ON request_log_entries (tenant_id, status, id)`,
	`CREATE INDEX idx_request_log_tenant_method ON request_log_entries (tenant_id, method, id)`,
	`CREATE INDEX idx_request_log_tenant_key ON request_log_entries (tenant_id, idempotency_key, id)
		WHERE idempotency_key IS NOT NULL`,
	`CREATE INDEX idx_request_log_tenant_outcome ON request_log_entries (tenant_id, idempotency_outcome, id)
		WHERE idempotency_outcome IS NOT NULL`,
	`CREATE INDEX idx_request_log_created ON request_log_entries (created_at)`,
}
