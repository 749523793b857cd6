// Package authstore stores sessions and instance settings (the generated JWT
// secret) with GORM on SQLite or PostgreSQL. Its row types stay here; internal/auth
// knows nothing of them.
package authstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/tenants"
)

// Store implements auth.SessionStore and auth.SettingStore. A sign-in, and a refused
// one, records its change (session.created, session.failed: docs/audit-log.md)
// through its changes.Point.
type Store struct {
	db    *gorm.DB
	point changes.Point
}

var (
	_ auth.SessionStore = (*Store)(nil)
	_ auth.SettingStore = (*Store)(nil)
)

// New returns a Store over db whose sign-ins record through rec (nil for a Store that
// only reads and writes settings: its sign-ins fail with changes.ErrNoRecorder). The
// tables come from riskapi's migrations.
func New(db *gorm.DB, rec changes.Recorder) *Store {
	return &Store{db: db, point: changes.Point{Tx: database.NewRunner(db), Recorder: rec}}
}

// signIn is the record of a sign-in of u (refused: failed), made by u.
func signIn(action changes.Action, tenantID, userID, email, sessionID string) changes.Change {
	return changes.Change{TenantID: tenantID, Action: action,
		Actor:  changes.Actor{Type: changes.ActorUser, ID: userID, Email: email},
		Target: changes.Target{Type: "session", ID: sessionID}}
}

type sessionRow struct {
	ID        string
	UserID    string
	TenantID  string
	CreatedAt time.Time
	ExpiresAt time.Time
	RevokedAt *time.Time
}

func (sessionRow) TableName() string { return "sessions" }

type settingRow struct {
	Name  string `gorm:"primaryKey"`
	Value string
}

func (settingRow) TableName() string { return "settings" }

// CreateSession inserts sess and records session.created, its user as the actor.
func (s *Store) CreateSession(ctx context.Context, sess auth.Session) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		row := sessionRow{ID: sess.ID, UserID: sess.UserID, TenantID: sess.TenantID,
			CreatedAt: sess.CreatedAt.UTC(), ExpiresAt: sess.ExpiresAt.UTC()}
		if err := database.Conn(ctx, s.db).Create(&row).Error; err != nil {
			return changes.Change{}, fmt.Errorf("create session: %w", err)
		}
		return signIn(changes.SessionCreated, sess.TenantID, sess.UserID, sess.Email, sess.ID), nil
	})
}

// SignInRefused records session.failed for u, in a transaction of its own (or the
// one ctx carries): it writes nothing else.
func (s *Store) SignInRefused(ctx context.Context, u tenants.User) error {
	return s.point.Write(ctx, func(context.Context) (changes.Change, error) {
		return signIn(changes.SessionFailed, u.TenantID, u.ID, u.Email, ""), nil
	})
}

// sessionWithRole is a session row joined to its user's role and its tenant's
// version pin and appetite. (A named field: GORM cannot scan into an embedded struct
// of an unexported type.)
type sessionWithRole struct {
	Row               sessionRow `gorm:"embedded"`
	Role              string
	Email             string
	APIVersion        string
	RiskAppetite      *int64
	AppetiteVersion   int64
	CategoryAppetites *string
}

// Session's columns: the session's, its user's role and email, its tenant's version
// pin and risk appetite (the tenant's row and its categories' rows aggregated into
// one JSON object, as the API-key lookup reads them in internal/tenants/tenantstore).
const (
	sessionColumns = "s.id, s.user_id, s.tenant_id, s.created_at, s.expires_at, s.revoked_at, u.role, u.email, t.api_version, " +
		"t.risk_appetite, t.appetite_version, (SELECT %s(c.category, c.appetite) FROM category_appetites AS c WHERE c.tenant_id = t.id) AS category_appetites"
	aggregatePostgres = "json_object_agg"
	aggregateSQLite   = "json_group_object"
)

// Session returns the session with id joined to its user (same tenant) and its
// enabled tenant in one indexed statement, or auth.ErrSessionNotFound. The same
// statement reads the tenant's risk appetite (one index probe more), so a scored
// write on the session does not read it again (docs/register.md, Appetite).
func (s *Store) Session(ctx context.Context, id string) (auth.Session, error) {
	aggregate := aggregateSQLite
	if s.db.Dialector.Name() == string(database.Postgres) {
		aggregate = aggregatePostgres
	}
	var row sessionWithRole
	err := database.Conn(ctx, s.db).Table("sessions AS s").
		Select(fmt.Sprintf(sessionColumns, aggregate)).
		Joins("JOIN users AS u ON u.id = s.user_id AND u.tenant_id = s.tenant_id").
		Joins("JOIN tenants AS t ON t.id = s.tenant_id AND t.disabled_at IS NULL").
		Where("s.id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return auth.Session{}, auth.ErrSessionNotFound
	}
	if err != nil {
		return auth.Session{}, fmt.Errorf("verify session: %w", err)
	}
	appetite, err := tenants.StoredAppetiteOf(row.RiskAppetite, row.AppetiteVersion, row.CategoryAppetites)
	if err != nil {
		return auth.Session{}, fmt.Errorf("verify session: %w", err)
	}
	r := row.Row
	return auth.Session{ID: r.ID, UserID: r.UserID, TenantID: r.TenantID,
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, RevokedAt: r.RevokedAt,
		Role: tenants.Role(row.Role), Email: row.Email, APIVersion: row.APIVersion, Appetite: appetite}, nil
}

// RevokeUserSessions revokes the user's live sessions but except.
func (s *Store) RevokeUserSessions(ctx context.Context, userID, except string, at time.Time) error {
	err := database.Conn(ctx, s.db).Model(&sessionRow{}).
		Where("user_id = ? AND id <> ? AND revoked_at IS NULL", userID, except).
		Update("revoked_at", at.UTC()).Error
	if err != nil {
		return fmt.Errorf("revoke sessions: %w", err)
	}
	return nil
}

// RevokeSession sets revoked_at once.
func (s *Store) RevokeSession(ctx context.Context, id string, at time.Time) error {
	err := database.Conn(ctx, s.db).Model(&sessionRow{}).Where("id = ? AND revoked_at IS NULL", id).
		Update("revoked_at", at.UTC()).Error
	return err
}

// DeleteExpiredSessions deletes sessions expired before now.
func (s *Store) DeleteExpiredSessions(ctx context.Context, now time.Time) (int, error) {
	res := s.db.WithContext(ctx).Where("expires_at < ?", now.UTC()).Delete(&sessionRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("delete expired sessions: %w", res.Error)
	}
	return int(res.RowsAffected), nil
}

// DeleteSetting deletes name's row, if any.
func (s *Store) DeleteSetting(ctx context.Context, name string) error {
	err := s.db.WithContext(ctx).Where("name = ?", name).Delete(&settingRow{}).Error
	if err != nil {
		return fmt.Errorf("delete setting %s: %w", name, err)
	}
	return nil
}

// Setting returns the value stored under name, or auth.ErrSettingNotFound.
func (s *Store) Setting(ctx context.Context, name string) (string, error) {
	var row settingRow
	err := s.db.WithContext(ctx).Where("name = ?", name).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", auth.ErrSettingNotFound
	}
	if err != nil {
		return "", fmt.Errorf("load setting %s: %w", name, err)
	}
	return row.Value, nil
}
