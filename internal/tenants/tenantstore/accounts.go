package tenantstore

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/tenants"
)

// InTx runs fn in the transaction ctx carries, or in a new one.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	return database.RunInTx(ctx, s.db, fn)
}

// LockTenant writes the tenant's row to itself: on PostgreSQL that takes its row
// lock, on SQLite the database's write lock, either way held to the transaction's
// end, so two requests checking "is this the last admin" take turns.
func (s *Store) LockTenant(ctx context.Context, id string) error {
	res := database.Conn(ctx, s.db).Exec("UPDATE tenants SET name = name WHERE id = ?", id)
	return affected(res, tenants.ErrTenantNotFound, "lock tenant")
}

// affected turns a statement's outcome into nil, its classified error, or notFound
// when it touched no row.
func affected(res *gorm.DB, notFound error, what string) error {
	if res.Error != nil {
		return fmt.Errorf("%s: %w", what, res.Error)
	}
	if res.RowsAffected == 0 {
		return notFound
	}
	return nil
}

// tenant is a statement on the tenant's rows only, in ctx's unit of work.
func (s *Store) tenant(ctx context.Context, tenantID string) *gorm.DB {
	return database.Conn(ctx, s.db).Scopes(database.OfTenant(tenantID))
}

// Tenants lists every tenant, oldest first.
func (s *Store) Tenants(ctx context.Context) ([]tenants.Tenant, error) {
	var rows []tenantRow
	if err := database.Conn(ctx, s.db).Scopes(live).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	out := make([]tenants.Tenant, len(rows))
	for i, r := range rows {
		out[i] = r.toTenant()
	}
	return out, nil
}

// SetTenantDisabled sets t's disabled_at (nil: enabled) and records tenant.disabled
// or tenant.enabled, or returns tenants.ErrTenantNotFound. A tenant already in that
// state is left as it is and records nothing.
func (s *Store) SetTenantDisabled(ctx context.Context, t tenants.Tenant, at *time.Time) error {
	if (t.DisabledAt != nil) == (at != nil) {
		return nil
	}
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		action := changes.TenantEnabled
		if at != nil {
			utc := at.UTC()
			at, action = &utc, changes.TenantDisabled
		}
		// The sandbox with its tenant: its events are no longer delivered either.
		res := database.Conn(ctx, s.db).Model(&tenantRow{}).Where("id IN ?", []string{t.ID, ids.SandboxOf(t.ID)}).
			Update("disabled_at", at)
		if err := affected(res, tenants.ErrTenantNotFound, "disable tenant"); err != nil {
			return changes.Change{}, err
		}
		after := t
		after.DisabledAt = at
		return tenantChange(action, t, after), nil
	})
}

// UserByID returns the user with id and its password hash, or
// tenants.ErrUserNotFound.
func (s *Store) UserByID(ctx context.Context, id string) (tenants.User, string, error) {
	var row userRow
	err := take(database.Conn(ctx, s.db).Where("id = ?", id), &row, tenants.ErrUserNotFound, "get user")
	return row.toUser(), row.PasswordHash, err
}

// Users lists the tenant's users newest first.
func (s *Store) Users(ctx context.Context, tenantID string, p tenants.Page) ([]tenants.User, bool, error) {
	out, more, err := database.Page(s.tenant(ctx, tenantID), database.NewestFirst, p.Before, p.Limit, (*userRow).toUser)
	if err != nil {
		return nil, false, fmt.Errorf("list users: %w", err)
	}
	return out, more, nil
}

// CountAdmins counts the tenant's admins.
func (s *Store) CountAdmins(ctx context.Context, tenantID string) (int, error) {
	var n int64
	err := s.tenant(ctx, tenantID).Model(&userRow{}).Where("role = ?", string(tenants.RoleAdmin)).Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("count admins: %w", err)
	}
	return int(n), nil
}

// SetUserRole changes u's role and records user.role_changed, or returns
// tenants.ErrUserNotFound. The same role again is no change and records nothing.
func (s *Store) SetUserRole(ctx context.Context, u tenants.User, role tenants.Role) error {
	if u.Role == role {
		return nil
	}
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		res := database.Conn(ctx, s.db).Model(&userRow{}).Where("id = ?", u.ID).Update("role", string(role))
		if err := affected(res, tenants.ErrUserNotFound, "set role"); err != nil {
			return changes.Change{}, err
		}
		after := u
		after.Role = role
		return userChange(changes.UserRoleChanged, &u, &after), nil
	})
}

// SetPasswordHash replaces u's password hash and records user.password_changed,
// which says only that the password changed; or returns tenants.ErrUserNotFound.
func (s *Store) SetPasswordHash(ctx context.Context, u tenants.User, hash string) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		res := database.Conn(ctx, s.db).Model(&userRow{}).Where("id = ?", u.ID).Update("password_hash", hash)
		if err := affected(res, tenants.ErrUserNotFound, "set password"); err != nil {
			return changes.Change{}, err
		}
		c := userChange(changes.UserPasswordChanged, &u, &u)
		c.Secret = []string{"password"}
		return c, nil
	})
}

// DeleteUser deletes u and records user.deleted, or returns tenants.ErrUserNotFound.
func (s *Store) DeleteUser(ctx context.Context, u tenants.User) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		res := database.Conn(ctx, s.db).Where("id = ?", u.ID).Delete(&userRow{})
		if err := affected(res, tenants.ErrUserNotFound, "delete user"); err != nil {
			return changes.Change{}, err
		}
		return userChange(changes.UserDeleted, &u, nil), nil
	})
}

// APIKeyByID returns the key with id, or tenants.ErrAPIKeyNotFound.
func (s *Store) APIKeyByID(ctx context.Context, id string) (tenants.APIKey, error) {
	var row apiKeyRow
	err := take(database.Conn(ctx, s.db).Where("id = ?", id), &row, tenants.ErrAPIKeyNotFound, "get api key")
	return row.toKey(), err
}

// APIKeys lists the tenant's keys newest first.
func (s *Store) APIKeys(ctx context.Context, tenantID string, p tenants.Page) ([]tenants.APIKey, bool, error) {
	out, more, err := database.Page(s.tenant(ctx, tenantID), database.NewestFirst, p.Before, p.Limit, (*apiKeyRow).toKey)
	if err != nil {
		return nil, false, fmt.Errorf("list api keys: %w", err)
	}
	return out, more, nil
}

// UserEmail returns the email of the tenant's user userID, or
// risks.ErrOwnerUnknown: a risk's user owner (risks.Owners).
func (s *Store) UserEmail(ctx context.Context, tenantID, userID string) (string, error) {
	var row userRow
	// A sandbox's risks are owned by the account's users (docs/sandboxes.md).
	err := take(s.tenant(ctx, ids.AccountOf(tenantID)).Select("email").Where("id = ?", userID), &row, risks.ErrOwnerUnknown, "get owner")
	return row.Email, err
}

// SetAPIVersion stores after's pin and records tenant.api_version_moved.
func (s *Store) SetAPIVersion(ctx context.Context, before, after tenants.Tenant) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		var at *time.Time
		if after.APIVersionMovedAt != nil {
			u := after.APIVersionMovedAt.UTC()
			at = &u
		}
		res := database.Conn(ctx, s.db).Model(&tenantRow{}).Where("id = ?", after.ID).Updates(map[string]any{
			"api_version": after.APIVersion, "api_version_replaced": after.APIVersionReplaced, "api_version_moved_at": at})
		if err := affected(res, tenants.ErrTenantNotFound, "move api version"); err != nil {
			return changes.Change{}, err
		}
		return tenantChange(changes.TenantAPIVersionMoved, before, after), nil
	})
}
