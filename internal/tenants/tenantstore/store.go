// Package tenantstore stores tenants, users and API keys with GORM on SQLite or
// PostgreSQL. Its row types stay here; the domain (internal/tenants) knows nothing
// of them.
package tenantstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/tenants"
)

// Store implements tenants.Store. Each change to a user, an API key or a tenant's
// state records its change (user.*, api_key.*, tenant.*: docs/audit-log.md) through
// its changes.Point, in the write's own unit of work.
type Store struct {
	db    *gorm.DB
	point changes.Point
	// sqlDB is db's pool, for the API-key lookup every /v2 request makes; nil when
	// db wraps no *sql.DB, and the lookup then goes through GORM.
	sqlDB *sql.DB
	// keyBySecret is that lookup in db's placeholder syntax.
	keyBySecret string
}

var _ tenants.Store = (*Store)(nil)

// New returns a Store over db whose writes record through rec (required: without it
// every recorded write fails with changes.ErrNoRecorder). The tables come from
// riskapi's migrations.
func New(db *gorm.DB, rec changes.Recorder) *Store {
	s := &Store{db: db, keyBySecret: selectKeyBySecret, point: changes.Point{Tx: database.NewRunner(db), Recorder: rec}}
	if db.Dialector.Name() != string(database.Postgres) {
		s.keyBySecret = selectKeyBySecretSQLite
	}
	s.sqlDB, _ = db.DB()
	return s
}

type tenantRow struct {
	ID         string
	Name       string
	CreatedAt  time.Time
	DisabledAt *time.Time
	// SandboxOf names the tenant whose sandbox this row is (ids.SandboxOf); nil for
	// a tenant. Sandboxes are no tenants of their own: every read of tenants skips
	// them (live).
	SandboxOf *string
	// APIVersion, APIVersionReplaced, APIVersionMovedAt: the pin (migration 0018).
	APIVersion         string
	APIVersionReplaced *string
	APIVersionMovedAt  *time.Time
}

func (tenantRow) TableName() string { return "tenants" }

func (r tenantRow) toTenant() tenants.Tenant {
	return tenants.Tenant{ID: r.ID, Name: r.Name, CreatedAt: r.CreatedAt.UTC(), DisabledAt: utc(r.DisabledAt),
		APIVersion: r.APIVersion, APIVersionReplaced: r.APIVersionReplaced, APIVersionMovedAt: utc(r.APIVersionMovedAt)}
}

type userRow struct {
	ID           string
	TenantID     string
	Email        string
	Role         string
	PasswordHash string
	CreatedAt    time.Time
}

func (userRow) TableName() string { return "users" }

func (r userRow) toUser() tenants.User {
	return tenants.User{ID: r.ID, TenantID: r.TenantID, Email: r.Email, Role: tenants.Role(r.Role),
		CreatedAt: r.CreatedAt.UTC()}
}

type apiKeyRow struct {
	ID         string
	TenantID   string
	Name       string
	SecretHash string
	Scopes     string // comma-separated
	Mode       string
	// CreatedByType and CreatedByID name the actor who created the key; "" for keys
	// older than the audit log.
	CreatedByType string
	CreatedByID   string
	CreatedAt     time.Time
	RevokedAt     *time.Time
	LastUsedAt    *time.Time
	// ExpiresAt, ExpiryRecordedAt, AllowedCidrs (comma-separated) and RolledTo:
	// migration 0020.
	ExpiresAt        *time.Time
	ExpiryRecordedAt *time.Time
	AllowedCidrs     string
	RolledTo         string
}

func (apiKeyRow) TableName() string { return "api_keys" }

func (r apiKeyRow) toKey() tenants.APIKey {
	var scopes []tenants.Scope
	for _, s := range strings.Split(r.Scopes, ",") {
		if s != "" {
			scopes = append(scopes, tenants.Scope(s))
		}
	}
	mode := tenants.Mode(r.Mode)
	if mode != tenants.ModeTest {
		mode = tenants.ModeLive
	}
	var cidrs []netip.Prefix
	for _, c := range strings.Split(r.AllowedCidrs, ",") {
		// Written by cidrsColumn from parsed prefixes: one that does not parse
		// cannot be there, and would only narrow the key further.
		if p, err := netip.ParsePrefix(c); err == nil {
			cidrs = append(cidrs, p)
		} else if c != "" {
			cidrs = append(cidrs, netip.Prefix{})
		}
	}
	return tenants.APIKey{ID: r.ID, TenantID: r.TenantID, Name: r.Name, Scopes: scopes, Mode: mode,
		CreatedBy: changes.Actor{Type: changes.ActorType(r.CreatedByType), ID: r.CreatedByID},
		CreatedAt: r.CreatedAt.UTC(), RevokedAt: utc(r.RevokedAt), LastUsedAt: utc(r.LastUsedAt),
		ExpiresAt: utc(r.ExpiresAt), ExpiryRecorded: r.ExpiryRecordedAt != nil, AllowedCidrs: cidrs, RolledTo: r.RolledTo}
}

// cidrsColumn is allowed_cidrs' value: the networks, comma-separated.
func cidrsColumn(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// keyRow is k's row, with its secret's digest.
func keyRow(k tenants.APIKey, secretHash string) apiKeyRow {
	strs := make([]string, len(k.Scopes))
	for i, sc := range k.Scopes {
		strs[i] = string(sc)
	}
	return apiKeyRow{ID: k.ID, TenantID: k.TenantID, Name: k.Name, SecretHash: secretHash,
		Scopes: strings.Join(strs, ","), Mode: string(k.Mode), CreatedByType: string(k.CreatedBy.Type), CreatedByID: k.CreatedBy.ID,
		CreatedAt: k.CreatedAt.UTC(), ExpiresAt: utc(k.ExpiresAt), AllowedCidrs: cidrsColumn(k.AllowedCidrs)}
}

// utc returns t in UTC: every time the store returns is UTC, whatever the driver
// read it as.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// take reads one row into dst, turning "no row" into notFound.
func take(q *gorm.DB, dst any, notFound error, what string) error {
	err := q.Take(dst).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return notFound
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// CreateTenant inserts t and its sandbox, in one statement.
func (s *Store) CreateTenant(ctx context.Context, t tenants.Tenant) error {
	rows := []tenantRow{{ID: t.ID, Name: t.Name, CreatedAt: t.CreatedAt.UTC(), APIVersion: t.APIVersion},
		{ID: ids.SandboxOf(t.ID), Name: t.Name, CreatedAt: t.CreatedAt.UTC(), SandboxOf: &t.ID, APIVersion: t.APIVersion}}
	if err := database.Conn(ctx, s.db).Create(&rows).Error; err != nil {
		return fmt.Errorf("create tenant: %w", err)
	}
	return nil
}

// live restricts a statement on tenants to tenants, not their sandboxes.
func live(q *gorm.DB) *gorm.DB { return q.Where("sandbox_of IS NULL") }

// Tenant returns the tenant with id, or tenants.ErrTenantNotFound.
func (s *Store) Tenant(ctx context.Context, id string) (tenants.Tenant, error) {
	var row tenantRow
	err := take(database.Conn(ctx, s.db).Scopes(live).Where("id = ?", id), &row, tenants.ErrTenantNotFound, "get tenant")
	return row.toTenant(), err
}

// TenantByName returns the oldest tenant named name, or tenants.ErrTenantNotFound.
func (s *Store) TenantByName(ctx context.Context, name string) (tenants.Tenant, error) {
	var row tenantRow
	err := take(database.Conn(ctx, s.db).Scopes(live).Where("name = ?", name).Order("id"), &row,
		tenants.ErrTenantNotFound, "find tenant")
	return row.toTenant(), err
}

// CreateUser inserts u and records user.created, or returns tenants.ErrEmailTaken.
func (s *Store) CreateUser(ctx context.Context, u tenants.User, passwordHash string) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		row := userRow{ID: u.ID, TenantID: u.TenantID, Email: u.Email, Role: string(u.Role), PasswordHash: passwordHash,
			CreatedAt: u.CreatedAt.UTC()}
		err := database.Conn(ctx, s.db).Create(&row).Error
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return changes.Change{}, tenants.ErrEmailTaken
		}
		if err != nil {
			return changes.Change{}, fmt.Errorf("create user: %w", err)
		}
		return userChange(changes.UserCreated, nil, &u), nil
	})
}

// UserByEmail returns the user with email, if its tenant is enabled, and its
// password hash, or tenants.ErrUserNotFound.
func (s *Store) UserByEmail(ctx context.Context, email string) (tenants.User, string, error) {
	var row struct {
		User             userRow `gorm:"embedded"`
		TenantDisabledAt *time.Time
	}
	q := database.Conn(ctx, s.db).Table("users").Select("users.*, tenants.disabled_at AS tenant_disabled_at").
		Joins("JOIN tenants ON tenants.id = users.tenant_id").Where("users.email = ?", email)
	if err := take(q, &row, tenants.ErrUserNotFound, "find user"); err != nil {
		return tenants.User{}, "", err
	}
	if row.TenantDisabledAt != nil {
		return row.User.toUser(), row.User.PasswordHash, tenants.ErrTenantDisabled
	}
	return row.User.toUser(), row.User.PasswordHash, nil
}

// CreateAPIKey inserts k with its secret's digest and records api_key.created
// (never the secret nor its digest).
func (s *Store) CreateAPIKey(ctx context.Context, k tenants.APIKey, secretHash string) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		row := keyRow(k, secretHash)
		if err := database.Conn(ctx, s.db).Create(&row).Error; err != nil {
			return changes.Change{}, fmt.Errorf("create api key: %w", err)
		}
		return keyChange(changes.APIKeyCreated, nil, k), nil
	})
}

// APIKeyBySecretHash returns the key with that digest, if its tenant is enabled, or
// tenants.ErrAPIKeyNotFound. One indexed statement per request: nothing is cached,
// so a revocation or a disabled tenant holds on every instance from the next
// request on. It is sent on database/sql, not GORM, because every /v2 request pays
// for it (docs/performance.md, issue 14); pgx prepares it once per connection. The
// same statement reads the tenant's pinned version and its risk appetite (the
// tenant's row and its categories' rows: one index probe more), so a scored write
// does not read the appetite again (docs/register.md, Appetite).
func (s *Store) APIKeyBySecretHash(ctx context.Context, secretHash string) (tenants.APIKey, error) {
	if s.sqlDB == nil {
		var row apiKeyRow
		q := database.Conn(ctx, s.db).Where("secret_hash = ?", secretHash).
			Where("tenant_id IN (SELECT id FROM tenants WHERE disabled_at IS NULL)")
		if err := take(q, &row, tenants.ErrAPIKeyNotFound, "verify api key"); err != nil {
			return tenants.APIKey{}, err
		}
		k := row.toKey()
		var pin struct{ APIVersion string }
		err := database.Conn(ctx, s.db).Table("tenants").Select("api_version").Where("id = ?", k.TenantID).Take(&pin).Error
		k.TenantAPIVersion = pin.APIVersion
		return k, err
	}
	ctx, cancel := database.Bound(ctx)
	defer cancel()
	var row apiKeyRow
	var revoked, lastUsed, expires, recorded sql.NullTime
	var pin string
	var overall *int64
	var appetiteVersion int64
	var categories *string
	err := s.sqlDB.QueryRowContext(ctx, s.keyBySecret, secretHash).Scan(
		&row.ID, &row.TenantID, &row.Name, &row.Scopes, &row.Mode, &row.CreatedAt, &revoked, &lastUsed,
		&expires, &recorded, &row.AllowedCidrs, &row.RolledTo, &pin, &overall, &appetiteVersion, &categories)
	if errors.Is(err, sql.ErrNoRows) {
		return tenants.APIKey{}, tenants.ErrAPIKeyNotFound
	}
	if err != nil {
		return tenants.APIKey{}, fmt.Errorf("verify api key: %w", database.Classify(err))
	}
	if revoked.Valid {
		row.RevokedAt = &revoked.Time
	}
	for _, t := range []struct {
		v   sql.NullTime
		dst **time.Time
	}{{lastUsed, &row.LastUsedAt}, {expires, &row.ExpiresAt}, {recorded, &row.ExpiryRecordedAt}} {
		if t.v.Valid {
			v := t.v.Time
			*t.dst = &v
		}
	}
	k := row.toKey()
	k.TenantAPIVersion = pin
	if k.TenantAppetite, err = tenants.StoredAppetiteOf(overall, appetiteVersion, categories); err != nil {
		return tenants.APIKey{}, fmt.Errorf("verify api key: %w", err)
	}
	return k, nil
}

// selectKeyBySecret is APIKeyBySecretHash's statement (PostgreSQL placeholders);
// selectKeyBySecretSQLite is the same with SQLite's.
const (
	selectKeyBySecret = `SELECT k.id, k.tenant_id, k.name, k.scopes, k.mode, k.created_at, k.revoked_at, k.last_used_at,
	k.expires_at, k.expiry_recorded_at, k.allowed_cidrs, k.rolled_to, t.api_version, t.risk_appetite, t.appetite_version,
	(SELECT json_object_agg(c.category, c.appetite) FROM category_appetites AS c WHERE c.tenant_id = t.id)
	FROM api_keys AS k JOIN tenants AS t ON t.id = k.tenant_id AND t.disabled_at IS NULL WHERE k.secret_hash = $1`
	selectKeyBySecretSQLite = `SELECT k.id, k.tenant_id, k.name, k.scopes, k.mode, k.created_at, k.revoked_at, k.last_used_at,
	k.expires_at, k.expiry_recorded_at, k.allowed_cidrs, k.rolled_to, t.api_version, t.risk_appetite, t.appetite_version,
	(SELECT json_group_object(c.category, c.appetite) FROM category_appetites AS c WHERE c.tenant_id = t.id)
	FROM api_keys AS k JOIN tenants AS t ON t.id = k.tenant_id AND t.disabled_at IS NULL WHERE k.secret_hash = ?`
)

// RevokeAPIKey sets k's revoked_at once and records api_key.revoked; a key revoked
// already (by now or by a concurrent call) is left as it is and records nothing.
func (s *Store) RevokeAPIKey(ctx context.Context, k tenants.APIKey, at time.Time) error {
	if k.RevokedAt != nil {
		return nil
	}
	err := s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		at := at.UTC()
		res := database.Conn(ctx, s.db).Model(&apiKeyRow{}).Where("id = ? AND revoked_at IS NULL", k.ID).
			Update("revoked_at", at)
		if res.Error != nil {
			return changes.Change{}, fmt.Errorf("revoke api key: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return changes.Change{}, errRevokedAlready
		}
		after := k
		after.RevokedAt = &at
		return keyChange(changes.APIKeyRevoked, &k, after), nil
	})
	if errors.Is(err, errRevokedAlready) {
		return nil
	}
	return err
}

// errRevokedAlready undoes a revocation that found the key revoked already.
var errRevokedAlready = errors.New("api key revoked already")

// TouchAPIKey records the key's last use, on the pool rather than ctx's transaction,
// unless the use recorded is less than a minute older: instances each throttle
// their own writes, and this keeps their sum to about one a minute per key.
func (s *Store) TouchAPIKey(ctx context.Context, id string, at time.Time) error {
	at = at.UTC()
	err := s.db.WithContext(ctx).Model(&apiKeyRow{}).
		Where("id = ? AND (last_used_at IS NULL OR last_used_at <= ?)", id, at.Add(-time.Minute)).
		Update("last_used_at", at).Error
	return err
}
