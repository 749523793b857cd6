package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0008IdempotencyReserve adds, on PostgreSQL, the function a keyed write's
// reservation calls: the key's transaction-scoped advisory lock and the read of its
// record in one statement (docs/idempotency.md, "Statements per keyed write"). The
// read is a statement of its own inside a VOLATILE function, so under READ
// COMMITTED its snapshot is taken after the lock is held, exactly as when the two
// were sent apart. The record comes back as the table's row type, so a column added
// later needs no new function. SQLite has no functions and needs none.
var m0008IdempotencyReserve = &gormigrate.Migration{
	ID: "0008_idempotency_reserve",
	Migrate: func(tx *gorm.DB) error {
		if tx.Dialector.Name() != "postgres" {
			return nil
		}
		return tx.Exec(`CREATE OR REPLACE FUNCTION idempotency_reserve(
	lock_id bigint, k_scope text, k_method text, k_path text, k_key text)
RETURNS TABLE (locked boolean, rec idempotency_records)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	locked := pg_try_advisory_xact_lock(lock_id);
	SELECT r.* INTO rec FROM idempotency_records r
		WHERE r.scope = k_scope AND r.method = k_method AND r.path = k_path AND r.idem_key = k_key;
	RETURN NEXT;
END
$$`).Error
	},
	Rollback: func(tx *gorm.DB) error {
		if tx.Dialector.Name() != "postgres" {
			return nil
		}
		return tx.Exec("DROP FUNCTION IF EXISTS idempotency_reserve(bigint, text, text, text, text)").Error
	},
}
