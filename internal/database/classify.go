package database

import (
	"errors"

	"gorm.io/gorm"
)

// registerClassify installs Classify after every kind of GORM operation, so the
// error of every statement a store sends through GORM is classified once, here,
// and no store classifies by hand. What GORM's callbacks do not see classifies its
// own errors: a transaction's BEGIN and COMMIT (RunInTx), rows read after a Raw
// query's callbacks returned (Raw(…).Scan, Row), and statements sent on the
// driver's connection (the request log's COPY, the reservation's pipeline).
func registerClassify(db *gorm.DB) error {
	cb := db.Callback()
	const name = "riskapi:classify"
	return errors.Join(
		cb.Create().After("gorm:create").Register(name, classifyStatement),
		cb.Query().After("gorm:query").Register(name, classifyStatement),
		cb.Update().After("gorm:update").Register(name, classifyStatement),
		cb.Delete().After("gorm:delete").Register(name, classifyStatement),
		cb.Row().After("gorm:row").Register(name, classifyStatement),
		cb.Raw().After("gorm:raw").Register(name, classifyStatement),
	)
}

// classifyStatement wraps the statement's error with ErrUnavailable when Classify
// says the store failed.
func classifyStatement(tx *gorm.DB) {
	if tx.Error != nil {
		tx.Error = Classify(tx.Error)
	}
}
