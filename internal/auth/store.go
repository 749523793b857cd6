package auth

import (
	"context"
	"errors"
	"time"

	"github.com/riskapi/riskapi/internal/tenants"
)

// Session is one sign-in: what a session token's "jti" names. Its row is
// authoritative, so logout can end a token before its expiry.
type Session struct {
	ID        string // SHA-256 (hex) of the token's jti: the jti itself is never stored
	UserID    string
	TenantID  string
	CreatedAt time.Time
	ExpiresAt time.Time
	RevokedAt *time.Time
	// Role is the user's role as it is now, read with the session (not stored in it),
	// so a demotion holds from the next request on.
	Role tenants.Role
	// Email is the user's address as it is now, read with the session like Role: the
	// audit log names the actor by it (docs/audit-log.md).
	Email string
	// APIVersion is the tenant's pinned API version, read with the session.
	APIVersion string
	// Appetite is the tenant's risk appetite as it is now, read with the session
	// like Role (nil when the store did not read it).
	Appetite *tenants.StoredAppetite
}

// ErrSessionNotFound: no session row with that ID.
var ErrSessionNotFound = errors.New("session not found")

// ErrSettingNotFound: no setting with that name.
var ErrSettingNotFound = errors.New("setting not found")

// SessionStore persists sessions (internal/auth/authstore).
type SessionStore interface {
	// CreateSession inserts s and records changes.SessionCreated (the actor: the user who signed in).
	CreateSession(ctx context.Context, s Session) error
	// SignInRefused records changes.SessionFailed for u, whose password was wrong.
	SignInRefused(ctx context.Context, u tenants.User) error
	// Session returns the session with id, its user's current role and its
	// tenant's current appetite, or
	// ErrSessionNotFound, also when its user is gone or its tenant disabled. It
	// reads the database every time: no instance may cache a session past its end.
	Session(ctx context.Context, id string) (Session, error)
	// RevokeSession sets the session's revocation time to at unless it is set.
	RevokeSession(ctx context.Context, id string, at time.Time) error
	// RevokeUserSessions revokes, at at, every live session of userID except the one
	// with id except (empty: none excepted).
	RevokeUserSessions(ctx context.Context, userID, except string, at time.Time) error
	// DeleteExpiredSessions deletes sessions that expired before now and returns
	// how many.
	DeleteExpiredSessions(ctx context.Context, now time.Time) (int, error)
}

// SettingStore reads and deletes named, instance-wide settings
// (internal/auth/authstore). riskapi once kept its generated JWT secret and webhook
// sealing key there; both now derive from SECRET_KEY, which is never stored, and the
// old rows are read once to re-seal, then deleted (docs/security.md).
type SettingStore interface {
	// Setting returns the value stored under name, or ErrSettingNotFound.
	Setting(ctx context.Context, name string) (string, error)
	// DeleteSetting deletes name's row, if any.
	DeleteSetting(ctx context.Context, name string) error
}
