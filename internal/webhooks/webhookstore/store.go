// Package webhookstore stores webhook sources and received event IDs with GORM on
// SQLite or PostgreSQL. Its row types stay here; the domain knows nothing of them.
package webhookstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/webhooks"
)

// Store implements webhooks.Store.
type Store struct {
	db      *gorm.DB
	dialect database.Dialect
	sealer  sealer
	point   changes.Point // see Recording
}

var _ webhooks.Store = (*Store)(nil)

// New returns a Store over db that keeps signing secrets sealed with key (32
// bytes, the instance's webhook secret key). The tables come from riskapi's
// migrations.
func New(db *database.DB, key []byte) (*Store, error) {
	sl, err := newSealer(key)
	if err != nil {
		return nil, err
	}
	return &Store{db: db.DB, dialect: db.Dialect, sealer: sl}, nil
}

// SealLegacy seals the secrets of sources created before secrets were sealed and
// returns how many it sealed. Safe to run on several instances at once: each row
// is rewritten only while it is still unsealed.
func (s *Store) SealLegacy(ctx context.Context) (int, error) {
	var rows []sourceRow
	err := s.db.WithContext(ctx).Where("secret NOT LIKE ?", sealedPrefix+"%").Find(&rows).Error
	if err != nil {
		return 0, fmt.Errorf("find unsealed webhook secrets: %w", err)
	}
	n := 0
	for _, w := range rows {
		sealed, err := s.sealer.seal(w.ID, w.Secret)
		if err != nil {
			return n, fmt.Errorf("webhook source %s: %w", w.ID, err)
		}
		res := s.db.WithContext(ctx).Model(&sourceRow{}).Where("id = ? AND secret = ?", w.ID, w.Secret).
			Update("secret", sealed)
		if res.Error != nil {
			return n, fmt.Errorf("seal webhook secret: %w", res.Error)
		}
		n += int(res.RowsAffected)
	}
	return n, nil
}

// Reseal re-seals, under this store's key, the secrets sealed under old (the key
// riskapi kept in its settings table before SECRET_KEY) and returns how many it
// re-sealed. Safe to run on several instances at once: a row is rewritten only
// while it still holds what was read, and one that opens with this store's key
// already is left alone.
func (s *Store) Reseal(ctx context.Context, old []byte) (int, error) {
	prev, err := newSealer(old)
	if err != nil {
		return 0, err
	}
	var rows []sourceRow
	if err := s.db.WithContext(ctx).Where("secret LIKE ?", sealedPrefix+"%").Find(&rows).Error; err != nil {
		return 0, fmt.Errorf("find sealed webhook secrets: %w", err)
	}
	n := 0
	for _, w := range rows {
		if _, err := s.sealer.open(w.ID, w.Secret); err == nil {
			continue
		}
		secret, err := prev.open(w.ID, w.Secret)
		if err != nil {
			return n, err
		}
		sealed, err := s.sealer.seal(w.ID, secret)
		if err != nil {
			return n, fmt.Errorf("webhook source %s: %w", w.ID, err)
		}
		res := s.db.WithContext(ctx).Model(&sourceRow{}).Where("id = ? AND secret = ?", w.ID, w.Secret).
			Update("secret", sealed)
		if res.Error != nil {
			return n, fmt.Errorf("re-seal webhook secret: %w", res.Error)
		}
		n += int(res.RowsAffected)
	}
	return n, nil
}

func (s *Store) toSource(w *sourceRow) (*webhooks.Source, error) {
	secret, err := s.sealer.open(w.ID, w.Secret)
	if err != nil {
		return nil, err
	}
	return &webhooks.Source{ID: w.ID, TenantID: w.TenantID, Name: w.Source, Secret: secret,
		CreatedAt: w.CreatedAt.UTC()}, nil
}

type sourceRow struct {
	ID        string
	TenantID  string
	Source    string
	Secret    string
	CreatedAt time.Time
}

func (sourceRow) TableName() string { return "webhook_sources" }

type eventRow struct {
	SourceID   string
	EventID    string
	ReceivedAt time.Time
}

func (eventRow) TableName() string { return "webhook_events" }

// InTx runs fn in the transaction ctx carries, or in a new one.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	return database.RunInTx(ctx, s.db, fn)
}

// CreateSource inserts src and records webhook_source.created, or returns
// webhooks.ErrSourceExists.
func (s *Store) CreateSource(ctx context.Context, src *webhooks.Source) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		if err := s.insertSource(ctx, src); err != nil {
			return changes.Change{}, err
		}
		return sourceChange(changes.WebhookSourceCreated, src, false, true), nil
	})
}

func (s *Store) insertSource(ctx context.Context, src *webhooks.Source) error {
	conn := database.Conn(ctx, s.db)
	// Checked first for a clear error on every driver; the unique index still decides
	// a race.
	if _, err := s.SourceByName(ctx, src.Name); err == nil {
		return webhooks.ErrSourceExists
	} else if !errors.Is(err, webhooks.ErrSourceNotFound) {
		return err
	}
	sealed, err := s.sealer.seal(src.ID, src.Secret)
	if err != nil {
		return err
	}
	err = conn.Create(&sourceRow{ID: src.ID, TenantID: src.TenantID, Source: src.Name,
		Secret: sealed, CreatedAt: src.CreatedAt.UTC()}).Error
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return webhooks.ErrSourceExists
	}
	if err != nil {
		return fmt.Errorf("create webhook source: %w", err)
	}
	return nil
}

// SourceByName returns the source named name, or webhooks.ErrSourceNotFound — also
// when its tenant is disabled: a disabled tenant is disabled everywhere, and its
// inbound webhooks answer 401 like an unknown source's (docs/uploads-and-webhooks.md).
func (s *Store) SourceByName(ctx context.Context, name string) (*webhooks.Source, error) {
	var w sourceRow
	err := database.Conn(ctx, s.db).Where("source = ?", name).
		Where("tenant_id IN (SELECT id FROM tenants WHERE disabled_at IS NULL)").Take(&w).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, webhooks.ErrSourceNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get webhook source: %w", err)
	}
	return s.toSource(&w)
}

// tenant is a statement on the tenant's rows only, in ctx's unit of work.
func (s *Store) tenant(ctx context.Context, tenantID string) *gorm.DB {
	return database.Conn(ctx, s.db).Scopes(database.OfTenant(tenantID))
}

// Sources lists the tenant's sources newest first.
func (s *Store) Sources(ctx context.Context, tenantID, before string, limit int) ([]*webhooks.Source, bool, error) {
	out, more, err := database.Page(s.tenant(ctx, tenantID), database.NewestFirst, before, limit, listedSource)
	if err != nil {
		return nil, false, fmt.Errorf("list webhook sources: %w", err)
	}
	return out, more, nil
}

// listedSource is a source as a list shows it: never with its secret, which is not
// even opened.
func listedSource(w *sourceRow) *webhooks.Source {
	return &webhooks.Source{ID: w.ID, TenantID: w.TenantID, Name: w.Source, CreatedAt: w.CreatedAt.UTC()}
}

// DeleteSource deletes the tenant's source and its received event IDs in one
// transaction and records webhook_source.deleted, or returns
// webhooks.ErrSourceNotFound.
func (s *Store) DeleteSource(ctx context.Context, tenantID, id string) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		var w sourceRow
		err := s.tenant(ctx, tenantID).Select("id", "tenant_id", "source", "created_at").Where("id = ?", id).Take(&w).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return changes.Change{}, webhooks.ErrSourceNotFound
		}
		if err != nil {
			return changes.Change{}, fmt.Errorf("delete webhook source: %w", err)
		}
		res := s.tenant(ctx, tenantID).Where("id = ?", id).Delete(&sourceRow{})
		if res.Error != nil {
			return changes.Change{}, fmt.Errorf("delete webhook source: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return changes.Change{}, webhooks.ErrSourceNotFound
		}
		if err := database.Conn(ctx, s.db).Where("source_id = ?", id).Delete(&eventRow{}).Error; err != nil {
			return changes.Change{}, fmt.Errorf("delete webhook events: %w", err)
		}
		return sourceChange(changes.WebhookSourceDeleted, listedSource(&w), true, false), nil
	})
}

// RecordEvent inserts the event unless it is there already (INSERT … ON CONFLICT DO
// NOTHING on the primary key): one row inserted means first. On PostgreSQL an insert
// racing an uncommitted one waits for it, so exactly one transaction is first; on
// SQLite writers take turns.
func (s *Store) RecordEvent(ctx context.Context, sourceID, eventID string, at time.Time) (bool, error) {
	res := database.Conn(ctx, s.db).Clauses(clause.OnConflict{DoNothing: true}).
		Create(&eventRow{SourceID: sourceID, EventID: eventID, ReceivedAt: at.UTC()})
	if res.Error != nil {
		return false, fmt.Errorf("record webhook event: %w", res.Error)
	}
	return res.RowsAffected == 1, nil
}

// LockFinding takes a transaction-scoped lock on (tenant, externalID)
// (database.LockXact).
func (s *Store) LockFinding(ctx context.Context, tenantID, externalID string) error {
	return database.LockXact(ctx, s.db, s.dialect, "webhook-finding", tenantID, externalID)
}
