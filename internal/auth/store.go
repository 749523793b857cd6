package auth

import (
	"context"
	"errors"
	"time"
)

// Session is one sign-in: what a session token's "jti" names. Its row is
// authoritative, so logout can end a token before its expiry.
type Session struct {
	ID        string // the token's jti
	UserID    string
	TenantID  string
	CreatedAt time.Time
	ExpiresAt time.Time
	RevokedAt *time.Time
}

// ErrSessionNotFound: no session row with that ID.
var ErrSessionNotFound = errors.New("session not found")

// ErrSettingNotFound: no setting with that name.
var ErrSettingNotFound = errors.New("setting not found")

// SessionStore persists sessions (internal/auth/authstore).
type SessionStore interface {
	// CreateSession inserts s.
	CreateSession(ctx context.Context, s Session) error
	// Session returns the session with id, or ErrSessionNotFound.
	Session(ctx context.Context, id string) (Session, error)
	// RevokeSession sets the session's revocation time to at unless it is set.
	RevokeSession(ctx context.Context, id string, at time.Time) error
	// DeleteExpiredSessions deletes sessions that expired before now and returns
	// how many.
	DeleteExpiredSessions(ctx context.Context, now time.Time) (int, error)
}

// SettingStore persists named, instance-wide settings such as the generated JWT
// secret (internal/auth/authstore).
type SettingStore interface {
	// PutSettingIfAbsent stores value under name unless name is set already, and
	// reports whether it stored it. Concurrent callers agree on one value.
	PutSettingIfAbsent(ctx context.Context, name, value string) (bool, error)
	// Setting returns the value stored under name, or ErrSettingNotFound.
	Setting(ctx context.Context, name string) (string, error)
}
