package apitest

import (
	"errors"
	"sync/atomic"

	"gorm.io/gorm"
)

// ErrInjected is the error FailReads gives the reads it fails.
var ErrInjected = errors.New("apitest: injected store failure")

// FailReads makes every read (GORM query) of table after the first n fail with
// ErrInjected, from now until the test ends: a store that stops answering midway,
// e.g. between an export's first batch and its second. It changes the Env's own
// database handle only; the Env must not be shared with other tests.
func (e *Env) FailReads(table string, n int) {
	e.T.Helper()
	var seen atomic.Int64
	name := "apitest:fail_reads_" + table
	fail := func(tx *gorm.DB) {
		if tx.Statement.Table == table && seen.Add(1) > int64(n) {
			_ = tx.AddError(ErrInjected)
		}
	}
	cb := e.App.DB.DB.Callback().Query()
	if err := cb.Before("gorm:query").Register(name, fail); err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(func() { _ = cb.Remove(name) })
}
