package tenantstore

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/database"
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
	if err := database.Conn(ctx, s.db).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	out := make([]tenants.Tenant, len(rows))
	for i, r := range rows {
		out[i] = r.toTenant()
	}
	return out, nil
}

// SetTenantDisabled sets disabled_at, or returns tenants.ErrTenantNotFound.
func (s *Store) SetTenantDisabled(ctx context.Context, id string, at *time.Time) error {
	if at != nil {
		utc := at.UTC()
		at = &utc
	}
	res := database.Conn(ctx, s.db).Model(&tenantRow{}).Where("id = ?", id).Update("disabled_at", at)
	return affected(res, tenants.ErrTenantNotFound, "disable tenant")
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

// SetUserRole changes the user's role, or returns tenants.ErrUserNotFound.
func (s *Store) SetUserRole(ctx context.Context, id string, role tenants.Role) error {
	res := database.Conn(ctx, s.db).Model(&userRow{}).Where("id = ?", id).Update("role", string(role))
	return affected(res, tenants.ErrUserNotFound, "set role")
}

// SetPasswordHash replaces the user's password hash, or returns
// tenants.ErrUserNotFound.
func (s *Store) SetPasswordHash(ctx context.Context, id, hash string) error {
	res := database.Conn(ctx, s.db).Model(&userRow{}).Where("id = ?", id).Update("password_hash", hash)
	return affected(res, tenants.ErrUserNotFound, "set password")
}

// DeleteUser deletes the user, or returns tenants.ErrUserNotFound.
func (s *Store) DeleteUser(ctx context.Context, id string) error {
	res := database.Conn(ctx, s.db).Where("id = ?", id).Delete(&userRow{})
	return affected(res, tenants.ErrUserNotFound, "delete user")
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
