package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The SQLite driver (github.com/glebarez/go-sqlite) interrupts a statement whose
// context ends only while it is prepared: the steps that read its rows — for a
// sort, a count or a search, nearly all of its work — run in rows.Next, which never
// looks at the context. A read past its query timeout (WithQueryTimeout) would run
// to its end, holding a connection and a CPU. interruptingConn closes that gap: the
// rows of a query are watched until closed, and sqlite3_interrupt stops the
// statement as soon as the context ends (Next then fails with SQLITE_INTERRUPT and
// the connection serves the next statement).

// openSQLitePool opens a pool of the driver's connections to dsn, each an
// interruptingConn.
func openSQLitePool(dsn string) (*sql.DB, error) {
	probe, err := sql.Open("sqlite", "")
	if err != nil {
		return nil, err
	}
	drv := probe.Driver()
	_ = probe.Close()
	return sql.OpenDB(interruptingConnector{drv: drv, dsn: dsn}), nil
}

type interruptingConnector struct {
	drv driver.Driver
	dsn string
}

func (c interruptingConnector) Connect(context.Context) (driver.Conn, error) {
	dc, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	ic, err := newInterruptingConn(dc)
	if err != nil {
		dc.Close()
		return nil, err
	}
	return ic, nil
}

func (c interruptingConnector) Driver() driver.Driver { return c.drv }

// sqliteConn is what the driver's connection offers past driver.Conn.
type sqliteConn interface {
	driver.Conn
	driver.Pinger
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
}

// interruptingConn is the driver's connection, whose queries' rows are interrupted
// when their context ends.
type interruptingConn struct {
	sqliteConn
	interrupt func()
}

// newInterruptingConn wraps dc, the driver's *conn. Its handle and thread state
// are unexported fields (db, tls), read once here; sqlite3_interrupt may be called
// from any goroutine while a statement runs (the driver's own context watch does
// the same). Errors: dc is not the connection this was written for.
func newInterruptingConn(dc driver.Conn) (*interruptingConn, error) {
	sc, ok := dc.(sqliteConn)
	v := reflect.ValueOf(dc)
	if !ok || v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("sqlite: unexpected driver connection %T", dc)
	}
	db, tls := v.Elem().FieldByName("db"), v.Elem().FieldByName("tls")
	if db.Kind() != reflect.Uintptr || tls.Kind() != reflect.Pointer || tls.Type().Elem() != reflect.TypeOf(libc.TLS{}) {
		return nil, fmt.Errorf("sqlite: driver connection %T has no db handle and TLS to interrupt", dc)
	}
	handle := uintptr(db.Uint())
	state := (*libc.TLS)(unsafe.Pointer(tls.Pointer()))
	return &interruptingConn{sqliteConn: sc, interrupt: func() { sqlite3.Xsqlite3_interrupt(state, handle) }}, nil
}

// QueryContext is the driver's, with the rows watched until closed.
func (c *interruptingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	rows, err := c.sqliteConn.QueryContext(ctx, query, args)
	if err != nil || ctx.Done() == nil {
		return rows, err
	}
	if _, typed := rows.(sqliteRows); !typed {
		return rows, nil
	}
	w := &watchedRows{Rows: rows, done: make(chan struct{})}
	go func() {
		select {
		case <-ctx.Done():
			w.mu.Lock()
			defer w.mu.Unlock()
			if !w.closed { // never once the statement has ended: it would stop the next one
				c.interrupt()
			}
		case <-w.done:
		}
	}()
	return w, nil
}

// watchedRows are a query's rows whose statement may be interrupted until Close.
type watchedRows struct {
	driver.Rows
	mu     sync.Mutex
	closed bool
	done   chan struct{}
}

// Close ends the watch, then closes the rows.
func (w *watchedRows) Close() error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.done)
	}
	w.mu.Unlock()
	return w.Rows.Close()
}

// sqliteRows is what the driver's rows offer past driver.Rows: their column types,
// which GORM reads to scan.
type sqliteRows interface {
	driver.Rows
	driver.RowsColumnTypeDatabaseTypeName
	driver.RowsColumnTypeLength
	driver.RowsColumnTypeNullable
	driver.RowsColumnTypePrecisionScale
	driver.RowsColumnTypeScanType
}

var _ sqliteRows = (*watchedRows)(nil)

func (w *watchedRows) ColumnTypeDatabaseTypeName(i int) string {
	return w.Rows.(sqliteRows).ColumnTypeDatabaseTypeName(i)
}

func (w *watchedRows) ColumnTypeLength(i int) (int64, bool) {
	return w.Rows.(sqliteRows).ColumnTypeLength(i)
}

func (w *watchedRows) ColumnTypeNullable(i int) (bool, bool) {
	return w.Rows.(sqliteRows).ColumnTypeNullable(i)
}

func (w *watchedRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	return w.Rows.(sqliteRows).ColumnTypePrecisionScale(i)
}

func (w *watchedRows) ColumnTypeScanType(i int) reflect.Type {
	return w.Rows.(sqliteRows).ColumnTypeScanType(i)
}
