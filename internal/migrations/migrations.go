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
}

// lockID is the PostgreSQL advisory lock that serialises migrating instances.
const lockID = 7216_2026_0001

// Apply brings db's schema to the newest version and returns how many migrations ran.
func Apply(ctx context.Context, db *database.DB) (int, error) {
	conn := db.WithContext(ctx)
	var ran int
	err := conn.Connection(func(c *gorm.DB) error {
		if db.Dialect == database.Postgres {
			// Session-level lock on this one connection: a second instance waits here
			// and then finds nothing left to do.
			if err := c.Exec("SELECT pg_advisory_lock(?)", lockID).Error; err != nil {
				return err
			}
			defer c.Exec("SELECT pg_advisory_unlock(?)", lockID)
		}
		before, err := applied(c)
		if err != nil {
			return err
		}
		if err := gormigrate.New(c, &gormigrate.Options{
			TableName: "schema_migrations", IDColumnName: "id", IDColumnSize: 64,
			UseTransaction: true,
		}, all).Migrate(); err != nil {
			return err
		}
		after, err := applied(c)
		ran = after - before
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("migrate: %w", database.Classify(err))
	}
	return ran, nil
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
