package riskhttp

import (
	"context"

	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/events"
	"github.com/riskapi/riskapi/internal/risks"
)

// Emitting returns s with every write also emitting its event through e —
// risk.created, risk.updated, risk.deleted, carrying the risk as this API shows it
// (docs/events.md) — in the write's own transaction: the one ctx carries (a keyed
// request's reservation, a service's unit of work, an inbound webhook's), or else a
// new one on db around the write and its event. Every path that changes a risk goes
// through the store, so none can change one without its event, nor emit one for a
// change that rolled back.
func Emitting(s risks.Store, db *gorm.DB, e *events.Emitter) risks.Store {
	return emitting{Store: s, db: db, e: e}
}

type emitting struct {
	risks.Store
	db *gorm.DB
	e  *events.Emitter
}

func (m emitting) emit(ctx context.Context, t events.Type, r *risks.Risk) error {
	_, err := m.e.Emit(ctx, r.TenantID, t, toResponse(r))
	return err
}

// Create inserts r and emits risk.created.
func (m emitting) Create(ctx context.Context, r *risks.Risk) error {
	return database.RunInTx(ctx, m.db, func(ctx context.Context) error {
		if err := m.Store.Create(ctx, r); err != nil {
			return err
		}
		return m.emit(ctx, events.RiskCreated, r)
	})
}

// Update stores r and emits risk.updated with r as stored.
func (m emitting) Update(ctx context.Context, r *risks.Risk) error {
	return database.RunInTx(ctx, m.db, func(ctx context.Context) error {
		if err := m.Store.Update(ctx, r); err != nil {
			return err
		}
		return m.emit(ctx, events.RiskUpdated, r)
	})
}

// Delete removes the risk and emits risk.deleted with the risk as it was.
func (m emitting) Delete(ctx context.Context, tenantID, id string) error {
	return database.RunInTx(ctx, m.db, func(ctx context.Context) error {
		// Locked, so risk.deleted carries the risk as it was last stored, not as it
		// was before an update that committed between this read and the DELETE.
		r, err := m.Store.GetForUpdate(ctx, tenantID, id)
		if err != nil {
			return err
		}
		if err := m.Store.Delete(ctx, tenantID, id); err != nil {
			return err
		}
		return m.emit(ctx, events.RiskDeleted, r)
	})
}
