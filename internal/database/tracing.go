package database

import (
	"context"
	"errors"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"
)

// spanSetting is where a statement's span waits between its two callbacks.
const spanSetting = "riskapi:span"

// registerTracing gives every statement sent through GORM a client span (docs/tracing.md)
// — a child of the span its context carries; a statement outside any trace (the
// delivery worker's polling, the sweeps) gets none, so idle polling sends nothing.
// The span holds the statement's text with placeholders, never its values (they
// may be secrets). What passes GORM's callbacks untraced: BEGIN and COMMIT
// (RunInTx), statements on the driver's connection (the PostgreSQL reservation's
// pipeline, the request log's batch).
func traceStatements(db *gorm.DB, tp trace.TracerProvider, system string) error {
	if tp == nil {
		return nil
	}
	t := tp.Tracer("github.com/riskapi/riskapi/internal/database")
	start := func(tx *gorm.DB) {
		ctx := tx.Statement.Context
		if ctx == nil || !trace.SpanContextFromContext(ctx).IsValid() {
			return
		}
		spanCtx, span := t.Start(ctx, "db", trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("db.system.name", system)))
		tx.Statement.Settings.Store(spanSetting, traced{span: span, parent: ctx})
		tx.Statement.Context = spanCtx
	}
	cb := db.Callback()
	const before, after = "riskapi:span_start", "riskapi:span_end"
	return errors.Join(
		cb.Create().Before("gorm:create").Register(before, start),
		cb.Create().After("gorm:create").Register(after, endSpan),
		cb.Query().Before("gorm:query").Register(before, start),
		cb.Query().After("gorm:query").Register(after, endSpan),
		cb.Update().Before("gorm:update").Register(before, start),
		cb.Update().After("gorm:update").Register(after, endSpan),
		cb.Delete().Before("gorm:delete").Register(before, start),
		cb.Delete().After("gorm:delete").Register(after, endSpan),
		cb.Row().Before("gorm:row").Register(before, start),
		cb.Row().After("gorm:row").Register(after, endSpan),
		cb.Raw().Before("gorm:raw").Register(before, start),
		cb.Raw().After("gorm:raw").Register(after, endSpan),
	)
}

// traced is a statement's span and the context it was started from, given back to
// the statement once the span ends, so the session's next statement is the
// request's child, not this one's.
type traced struct {
	span   trace.Span
	parent context.Context
}

// endSpan names the statement's span after its operation and table, as the
// OpenTelemetry database conventions do ("SELECT risks"), and ends it.
func endSpan(tx *gorm.DB) {
	v, ok := tx.Statement.Settings.LoadAndDelete(spanSetting)
	if !ok {
		return
	}
	t := v.(traced)
	sql := tx.Statement.SQL.String()
	op, _, _ := strings.Cut(strings.TrimSpace(sql), " ")
	op = strings.ToUpper(op)
	name := op
	if table := tx.Statement.Table; table != "" {
		name += " " + table
		t.span.SetAttributes(attribute.String("db.collection.name", table))
	}
	t.span.SetName(name)
	t.span.SetAttributes(attribute.String("db.operation.name", op), attribute.String("db.query.text", sql))
	if tx.Error != nil && !errors.Is(tx.Error, gorm.ErrRecordNotFound) {
		t.span.SetStatus(codes.Error, "")
		t.span.SetAttributes(attribute.String("error.type", errorType(tx.Error)))
	}
	t.span.End()
	tx.Statement.Context = t.parent
}

// errorType is a span's error.type: whether the store failed (ErrUnavailable) or
// the statement did; never the driver's message, which may quote values.
func errorType(err error) string {
	if errors.Is(err, ErrUnavailable) {
		return "store_unavailable"
	}
	return "statement_failed"
}
