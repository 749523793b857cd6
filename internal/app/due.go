package app

import (
	"context"
	"errors"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/due"
	"github.com/riskapi/riskapi/internal/due/duestore"
	"github.com/riskapi/riskapi/internal/followup"
	"github.com/riskapi/riskapi/internal/followup/followupstore"
	"github.com/riskapi/riskapi/internal/followup/followupview"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/risks/riskstore"
	"github.com/riskapi/riskapi/internal/risks/riskview"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/tenants/tenantstore"
	"github.com/riskapi/riskapi/internal/tenants/tenantview"
)

// keyExpiringDays is how long before an API key's expiresAt api_key.expiring falls
// due (docs/register.md, Due dates).
const keyExpiringDays = 7

// dueKinds are the kinds of due-date notice the schedule looks for
// (docs/register.md, Due dates): a new kind is one more Kind here, its action
// declared in changes.Registry.
func dueKinds(ds *duestore.Store, rs *riskstore.Store, fs *followupstore.Store, ts *tenantstore.Store, follow *followup.Service, reviewDueDays int) []due.Kind {
	riskNotice := func(action changes.Action) func(ctx context.Context, it due.Item, eventID string) error {
		return func(ctx context.Context, it due.Item, eventID string) error {
			r, err := rs.GetForUpdate(ctx, it.TenantID, it.ObjectID)
			if errors.Is(err, risks.ErrNotFound) {
				return due.ErrMoved
			}
			if err != nil {
				return err
			}
			if r.ReviewDate == nil || *r.ReviewDate != it.DueDate {
				return due.ErrMoved
			}
			return ds.Record(ctx, changes.Change{TenantID: it.TenantID, Action: action, Target: changes.Target{ID: r.ID},
				After: riskview.Of(r), EventID: eventID})
		}
	}
	acceptanceNotice := func(ctx context.Context, it due.Item, eventID string) error {
		a, err := fs.AcceptanceForUpdate(ctx, it.TenantID, it.ObjectID)
		if errors.Is(err, followup.ErrAcceptanceNotFound) {
			return due.ErrMoved
		}
		if err != nil {
			return err
		}
		if a.Status != followup.AcceptanceApproved || a.ValidUntil != it.DueDate {
			return due.ErrMoved
		}
		return ds.Record(ctx, changes.Change{TenantID: it.TenantID, Action: changes.AcceptanceExpiring,
			Target: changes.Target{ID: a.ID}, After: followupview.OfAcceptance(a), EventID: eventID})
	}
	reviews := due.Source{Table: "risks", DateColumn: "review_date", Where: "t.status <> 'closed'", Marked: true}
	approved := due.Source{Table: "acceptances", DateColumn: "valid_until", Where: "t.status = 'approved'"}
	return []due.Kind{
		{Action: changes.RiskReviewDue, Source: reviews, Lead: reviewDueDays, Notice: riskNotice(changes.RiskReviewDue)},
		{Action: changes.RiskReviewOverdue, Source: reviews, Lead: -1, Lookback: due.RetentionDays,
			Notice: riskNotice(changes.RiskReviewOverdue)},
		{Action: changes.ActionOverdue, Source: due.Source{Table: "risk_actions", DateColumn: "due_date", Where: "t.status = 'open'"},
			Lead: -1, Lookback: due.RetentionDays, Notice: func(ctx context.Context, it due.Item, eventID string) error {
				a, err := fs.ActionForUpdate(ctx, it.TenantID, it.ObjectID)
				if errors.Is(err, followup.ErrActionNotFound) {
					return due.ErrMoved
				}
				if err != nil {
					return err
				}
				if a.Status != followup.ActionOpen || a.DueDate == nil || *a.DueDate != it.DueDate {
					return due.ErrMoved
				}
				return ds.Record(ctx, changes.Change{TenantID: it.TenantID, Action: changes.ActionOverdue,
					Target: changes.Target{ID: a.ID}, After: followupview.OfAction(a), EventID: eventID})
			}},
		{Action: changes.AcceptanceExpiring, Source: approved, Lead: 14, Notice: acceptanceNotice},
		{Action: changes.AcceptanceExpired, Source: approved, Lead: -1,
			Notice: func(ctx context.Context, it due.Item, eventID string) error {
				err := follow.Expire(ctx, it.TenantID, it.ObjectID, it.DueDate, eventID)
				if errors.Is(err, followup.ErrNotDue) || errors.Is(err, followup.ErrAcceptanceNotFound) {
					return due.ErrMoved
				}
				return err
			}},
		keyExpiring(ds, ts),
	}
}

// keyExpiring is the kind api_key.expiring: keyExpiringDays before a key's
// expiresAt (its UTC day).
func keyExpiring(ds *duestore.Store, ts *tenantstore.Store) due.Kind {
	// A key rolled already has its successor: its end is the overlap its roll chose,
	// nothing to remind anyone of; a revoked key has no end to come.
	keys := due.Source{Table: "api_keys", DateColumn: "expires_at", Timestamp: true,
		Where: "t.revoked_at IS NULL AND t.rolled_to = ''"}
	keyNotice := func(ctx context.Context, it due.Item, eventID string) error {
		k, err := ts.APIKeyByID(ctx, it.ObjectID)
		if errors.Is(err, tenants.ErrAPIKeyNotFound) {
			return due.ErrMoved
		}
		if err != nil {
			return err
		}
		if k.RevokedAt != nil || k.RolledTo != "" || k.ExpiresAt == nil || k.ExpiresAt.UTC().Format(due.DateLayout) != it.DueDate {
			return due.ErrMoved
		}
		return ds.Record(ctx, changes.Change{TenantID: it.TenantID, Action: changes.APIKeyExpiring,
			Target: changes.Target{ID: k.ID}, After: tenantview.APIKeyOf(k), EventID: eventID})
	}
	return due.Kind{Action: changes.APIKeyExpiring, Source: keys, Lead: keyExpiringDays, Notice: keyNotice}
}
