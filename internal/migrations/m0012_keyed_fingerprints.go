package migrations

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// erasedFingerprint replaces every fingerprint written before fingerprints were
// keyed. It is no hex digest, so no request's fingerprint ever equals it: a retry
// of a request made before the upgrade gets 422 IDEMPOTENCY_KEY_REUSED, never a
// second run.
const erasedFingerprint = "erased: unkeyed (migration 0012)"

// m0012KeyedFingerprints erases the fingerprints stored before they were keyed
// with SECRET_KEY: a plain SHA-256 of a request body lets anyone with a copy of
// the database test guesses of it — the password of a keyed POST /v1/users or
// /v1/me/password among them (docs/security.md). Keyed fingerprints could not
// match them anyway.
var m0012KeyedFingerprints = &gormigrate.Migration{
	ID: "0012_keyed_fingerprints",
	Migrate: func(tx *gorm.DB) error {
		return tx.Exec("UPDATE idempotency_records SET fingerprint = ?", erasedFingerprint).Error
	},
	Rollback: func(*gorm.DB) error { return nil },
}
