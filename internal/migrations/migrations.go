// Package migrations holds riskapi's versioned schema. Each migration is frozen once
// released: its row structs are snapshots, never the stores' live types, so a later
// change to a store cannot rewrite history. Apply is safe to call from several
// instances at once and is a no-op when the schema is current.
package migrations

import (
	"context"
	"fmt"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/database"
)

// all lists the migrations in order; append only.
var all = []*gormigrate.Migration{
	m0001Initial,
	m0002Accounts,
	m0004RequestLog,
	m0006Readiness,
	m0007IdempotencyHeaders,
	m0005Events,
	m0008IdempotencyReserve,
	m0009RequestLogStoreOutcome,
	m0010RiskVersion,
	m0011AuditLog,
	m0012KeyedFingerprints,
	m0013RiskRegister,
	m0014AuditLogLean,
	m0015RegisterHeatmap,
	m0016HeatCounts,
	m0017SearchPerTenant,
	m0018APIVersions,
	m0019Sandboxes,
	m0020Lifecycle,
	m0021RegisterInTime,
	m0022ViaMCP,
	m0025EndpointVersion,
	m0026AppetiteTrends,
	m0028SnapshotStaleFrom,
	m0029DropTenantIndex,
	m0030ResidualSortHistory,
	m0031PendingImports,
	m0033ActionOwnerEmail,
}

// lockID is the PostgreSQL advisory lock that serialises migrating instances.
const lockID = 7216_2026_0001

// Apply brings db's schema to the newest version and returns how many migrations ran.
//
// On PostgreSQL every pending migration runs in one transaction that first takes a
// transaction-scoped advisory lock: a second instance waits there and then finds
// nothing left to do. The lock ends with the transaction, never with a session,
// so it holds through a transaction pooler (docs/deploying.md), and since
// PostgreSQL's DDL is transactional a release's migrations apply all or none.
// On SQLite, one process's store, each migration is its own transaction.
func Apply(ctx context.Context, db *database.DB) (int, error) {
	var ran int
	var err error
	if db.Dialect == database.Postgres {
		err = db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec("SELECT pg_advisory_xact_lock(?)", lockID).Error; err != nil {
				return err
			}
			ran, err = migrate(tx, false)
			return err
		})
	} else {
		err = db.WithContext(ctx).Connection(func(c *gorm.DB) error {
			ran, err = migrate(c, true)
			return err
		})
	}
	if err != nil {
		return 0, fmt.Errorf("migrate: %w", database.Classify(err))
	}
	return ran, nil
}

// migrate runs the pending migrations on c, each in a transaction of its own when
// ownTx, and returns how many ran.
func migrate(c *gorm.DB, ownTx bool) (int, error) {
	before, err := applied(c)
	if err != nil {
		return 0, err
	}
	if err := gormigrate.New(c, &gormigrate.Options{
		TableName: "schema_migrations", IDColumnName: "id", IDColumnSize: 64,
		UseTransaction: ownTx,
	}, all).Migrate(); err != nil {
		return 0, err
	}
	after, err := applied(c)
	return after - before, err
}

// applied counts the recorded migrations. It works on a new session of c: c is the
// connection's own handle, on which a chained Table() would stay set and send every
// later migration's Migrator (AddColumn, …) to schema_migrations instead of the
// table its model names.
func applied(c *gorm.DB) (int, error) {
	c = c.Session(&gorm.Session{NewDB: true})
	if !c.Migrator().HasTable("schema_migrations") {
		return 0, nil
	}
	var n int64
	err := c.Table("schema_migrations").Count(&n).Error
	return int(n), err
}
