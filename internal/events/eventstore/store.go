// Package eventstore stores events, webhook endpoints, queued deliveries and the
// delivery log with GORM on SQLite or PostgreSQL. Its row types stay here.
package eventstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/events"
	"github.com/riskapi/riskapi/internal/events/delivery"
	"github.com/riskapi/riskapi/internal/secretkey"
)

// Store implements events.Store, events.EndpointStore and delivery.Store.
type Store struct {
	db      *gorm.DB
	dialect database.Dialect
	sealer  *secretkey.Sealer // endpoint secrets (endpoints.go)
	point   changes.Point     // see Recording
}

var (
	_ events.Store         = (*Store)(nil)
	_ events.EndpointStore = (*Store)(nil)
	_ delivery.Store       = (*Store)(nil)
)

// New returns the store over db, sealing endpoint secrets with sealKey (32 bytes,
// derived from SECRET_KEY: secretkey.SealWebhookSecrets). Errors: a bad key.
func New(db *database.DB, sealKey []byte) (*Store, error) {
	sl, err := secretkey.NewSealer(sealKey)
	if err != nil {
		return nil, err
	}
	return &Store{db: db.DB, dialect: db.Dialect, sealer: sl}, nil
}

// Delivery states. A delivered delivery leaves the queue; the log keeps its attempts.
const (
	statePending = "pending"
	stateFailed  = "failed"
)

type eventRow struct {
	ID        string
	TenantID  string
	Type      string
	Payload   string
	CreatedAt time.Time `gorm:"autoCreateTime:false"`
}

func (eventRow) TableName() string { return "events" }

func toEvent(r *eventRow) *events.Event {
	return &events.Event{ID: r.ID, TenantID: r.TenantID, Type: events.Type(r.Type),
		CreatedAt: r.CreatedAt.UTC(), Payload: []byte(r.Payload)}
}

// InTx runs fn in the transaction ctx carries, or in a new one.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	return database.RunInTx(ctx, s.db, fn)
}

// queueSQL queues one delivery of an event to each enabled subscribed endpoint of
// its tenant, in one statement: endpoints store their types as "*" or ",a,b,".
// skipSQL logs the event as skipped (attempt 0) for each disabled one.
const (
	queueSQL = `INSERT INTO webhook_deliveries
	(tenant_id, event_id, endpoint_id, state, attempts, next_attempt_at, retry_until, created_at)
	SELECT tenant_id, ?, id, 'pending', 0, ?, ?, ? FROM webhook_endpoints
	WHERE tenant_id = ? AND (event_types = '*' OR event_types LIKE ?) AND disabled_at IS NULL`
	skipSQL = `INSERT INTO webhook_attempts
	(tenant_id, endpoint_id, event_id, delivery_id, attempt, status_code, error, duration_ms, created_at)
	SELECT tenant_id, id, ?, 0, 0, 0, '` + skippedError + `', 0, ? FROM webhook_endpoints
	WHERE tenant_id = ? AND (event_types = '*' OR event_types LIKE ?) AND disabled_at IS NOT NULL`
)

func (s *Store) queue(ctx context.Context, ev *events.Event, due, retryUntil time.Time) (int, error) {
	like := "%," + string(ev.Type) + ",%"
	if err := database.Conn(ctx, s.db).Exec(skipSQL, ev.ID, due.UTC(), ev.TenantID, like).Error; err != nil {
		return 0, fmt.Errorf("log skipped deliveries of %s: %w", ev.ID, err)
	}
	res := database.Conn(ctx, s.db).Exec(queueSQL, ev.ID, due.UTC(), retryUntil.UTC(), due.UTC(), ev.TenantID, like)
	if res.Error != nil {
		return 0, fmt.Errorf("queue deliveries of %s: %w", ev.ID, res.Error)
	}
	return int(res.RowsAffected), nil
}

// insertQueuePG is Insert in one statement on PostgreSQL: the event, its skipped
// entries (disabled endpoints) and its deliveries in one round trip, since every
// write of the API pays for it. Its count of rows is the deliveries'.
const insertQueuePG = `WITH ev AS (INSERT INTO events (id, tenant_id, type, payload, created_at)
	VALUES (?, ?, ?, ?, ?) RETURNING id),
	skipped AS (INSERT INTO webhook_attempts
	(tenant_id, endpoint_id, event_id, delivery_id, attempt, status_code, error, duration_ms, created_at)
	SELECT e.tenant_id, e.id, ev.id, 0, 0, 0, '` + skippedError + `', 0, ? FROM webhook_endpoints e CROSS JOIN ev
	WHERE e.tenant_id = ? AND (e.event_types = '*' OR e.event_types LIKE ?) AND e.disabled_at IS NOT NULL)
	INSERT INTO webhook_deliveries
	(tenant_id, event_id, endpoint_id, state, attempts, next_attempt_at, retry_until, created_at)
	SELECT e.tenant_id, ev.id, e.id, 'pending', 0, ?, ?, ? FROM webhook_endpoints e CROSS JOIN ev
	WHERE e.tenant_id = ? AND (e.event_types = '*' OR e.event_types LIKE ?) AND e.disabled_at IS NULL`

// Insert stores ev and queues its deliveries in the transaction ctx carries, and
// calls queued with how many it queued once they are (events.Store.Insert).
// Errors: events.ErrNoUnitOfWork when ctx carries none; the store's.
func (s *Store) Insert(ctx context.Context, ev *events.Event, retryUntil time.Time, queued func(n int)) error {
	if !database.InTx(ctx) {
		return events.ErrNoUnitOfWork
	}
	at := ev.CreatedAt.UTC()
	if s.dialect == database.Postgres {
		// Carrying the statements held or deferred in the unit of work (the risk's
		// INSERT, the audit entry's); the last statement of a lazy unit of work.
		err := database.ExecLast(ctx, s.db, func(rows int64) { queued(int(rows)) }, insertQueuePG,
			ev.ID, ev.TenantID, string(ev.Type), string(ev.Payload), at,
			at, ev.TenantID, "%,"+string(ev.Type)+",%",
			at, retryUntil.UTC(), at, ev.TenantID, "%,"+string(ev.Type)+",%")
		if err != nil {
			return fmt.Errorf("insert event: %w", err)
		}
		return nil
	}
	row := &eventRow{ID: ev.ID, TenantID: ev.TenantID, Type: string(ev.Type), Payload: string(ev.Payload), CreatedAt: at}
	if err := database.Conn(ctx, s.db).Create(row).Error; err != nil {
		return fmt.Errorf("insert event: %w", err)
	}
	n, err := s.queue(ctx, ev, ev.CreatedAt, retryUntil)
	if err != nil {
		return err
	}
	queued(n)
	return nil
}

// queueManySQL queues the deliveries of the events whose IDs follow (the `IN` list
// is appended), each due at its event's creation, as queueSQL does for one, and
// marked with its event's import, if any (database.WithImport);
// skipManySQL logs them skipped for disabled endpoints, as skipSQL.
const (
	queueManySQL = `INSERT INTO webhook_deliveries
	(tenant_id, event_id, endpoint_id, state, attempts, next_attempt_at, retry_until, created_at, import_id)
	SELECT e.tenant_id, ev.id, e.id, 'pending', 0, ev.created_at, ?, ev.created_at, ev.import_id
	FROM events ev JOIN webhook_endpoints e ON e.tenant_id = ev.tenant_id
	WHERE (e.event_types = '*' OR e.event_types LIKE '%,' || ev.type || ',%') AND e.disabled_at IS NULL AND ev.id IN `
	skipManySQL = `INSERT INTO webhook_attempts
	(tenant_id, endpoint_id, event_id, delivery_id, attempt, status_code, error, duration_ms, created_at)
	SELECT e.tenant_id, e.id, ev.id, 0, 0, 0, '` + skippedError + `', 0, ev.created_at
	FROM events ev JOIN webhook_endpoints e ON e.tenant_id = ev.tenant_id
	WHERE (e.event_types = '*' OR e.event_types LIKE '%,' || ev.type || ',%') AND e.disabled_at IS NOT NULL
	AND ev.id IN `
)

// InsertMany stores evs and queues their deliveries in the transaction ctx
// carries: the events in multi-row INSERTs (database.InsertRows), then their
// deliveries in one INSERT … SELECT per database.BatchParams events. Errors:
// events.ErrNoUnitOfWork when ctx carries none; the store's.
func (s *Store) InsertMany(ctx context.Context, evs []*events.Event, retryUntil time.Time) (int, error) {
	if !database.InTx(ctx) {
		return 0, events.ErrNoUnitOfWork
	}
	rows := make([][]any, len(evs))
	for i, ev := range evs {
		rows[i] = []any{ev.ID, ev.TenantID, string(ev.Type), string(ev.Payload), ev.CreatedAt.UTC()}
	}
	if err := database.InsertRows(ctx, s.db, "events", []string{"id", "tenant_id", "type", "payload", "created_at"}, rows); err != nil {
		return 0, fmt.Errorf("insert events: %w", err)
	}
	queued := 0
	per := database.BatchParams(s.db) - 1
	for start := 0; start < len(evs); start += per {
		chunk := evs[start:min(start+per, len(evs))]
		args := make([]any, 0, 1+len(chunk))
		args = append(args, retryUntil.UTC())
		for _, ev := range chunk {
			args = append(args, ev.ID)
		}
		in := "(" + strings.TrimSuffix(strings.Repeat("?,", len(chunk)), ",") + ")"
		if err := database.Conn(ctx, s.db).Exec(skipManySQL+in, args[1:]...).Error; err != nil {
			return 0, fmt.Errorf("log skipped deliveries of %d events: %w", len(chunk), err)
		}
		res := database.Conn(ctx, s.db).Exec(queueManySQL+in, args...)
		if res.Error != nil {
			return 0, fmt.Errorf("queue deliveries of %d events: %w", len(chunk), res.Error)
		}
		queued += int(res.RowsAffected)
	}
	return queued, nil
}

// Requeue queues a new delivery of ev to each subscribed endpoint.
func (s *Store) Requeue(ctx context.Context, ev *events.Event, now, retryUntil time.Time) (int, error) {
	return s.queue(ctx, ev, now, retryUntil)
}

// tenant is a statement on the tenant's rows only, in ctx's unit of work.
func (s *Store) tenant(ctx context.Context, tenantID string) *gorm.DB {
	return database.Conn(ctx, s.db).Scopes(database.OfTenant(tenantID))
}

// Get returns the tenant's event with id, or events.ErrNotFound.
func (s *Store) Get(ctx context.Context, tenantID, id string) (*events.Event, error) {
	var r eventRow
	err := s.tenant(ctx, tenantID).Scopes(database.Published(tenantID, "import_id")).Where("id = ?", id).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, events.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get event: %w", err)
	}
	return toEvent(&r), nil
}

// List returns up to f.Limit of the tenant's events, newest first (IDs are UUIDv7),
// and whether more follow.
func (s *Store) List(ctx context.Context, tenantID string, f events.Filter) ([]*events.Event, bool, error) {
	q := s.tenant(ctx, tenantID).Scopes(database.Published(tenantID, "import_id"))
	if f.Type != "" {
		q = q.Where("type = ?", string(f.Type))
	}
	out, more, err := database.Page(q, database.NewestFirst, f.Before, f.Limit, toEvent)
	if err != nil {
		return nil, false, fmt.Errorf("list events: %w", err)
	}
	return out, more, nil
}

// DeleteCreatedBefore deletes up to limit events created before t, oldest first,
// with their deliveries and delivery log, in one transaction.
func (s *Store) DeleteCreatedBefore(ctx context.Context, t time.Time, limit int) (int, error) {
	var n int
	err := database.RunInTx(ctx, s.db, func(ctx context.Context) error {
		conn := database.Conn(ctx, s.db)
		var ids []string
		if err := conn.Model(&eventRow{}).Where("created_at < ?", t.UTC()).Order("created_at").
			Limit(limit).Pluck("id", &ids).Error; err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		for _, table := range []string{"webhook_attempts", "webhook_deliveries"} {
			if err := conn.Exec("DELETE FROM "+table+" WHERE event_id IN ?", ids).Error; err != nil {
				return err
			}
		}
		res := conn.Where("id IN ?", ids).Delete(&eventRow{})
		n = int(res.RowsAffected)
		return res.Error
	})
	if err != nil {
		return 0, fmt.Errorf("sweep events: %w", err)
	}
	return n, nil
}

// typesColumn encodes an endpoint's types for queueSQL's LIKE.
func typesColumn(ts []events.Type) string {
	if len(ts) == 0 {
		return "*"
	}
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return "," + strings.Join(s, ",") + ","
}

func parseTypesColumn(c string) []events.Type {
	if c == "*" {
		return nil
	}
	var out []events.Type
	for _, p := range strings.Split(strings.Trim(c, ","), ",") {
		if p != "" {
			out = append(out, events.Type(p))
		}
	}
	return out
}
