package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/riskapi/riskapi/internal/tenants"
)

// SessionTTL is how long a session token lives.
const SessionTTL = 12 * time.Hour

// ErrInvalidSession means a token that is malformed, tampered with, expired or logged
// out.
var ErrInvalidSession = errors.New("invalid session")

// Claims are a session token's JWT claims: sub (user ID), tid (tenant ID), exp, iat
// and jti (session ID), signed HS256 (RFC 7519, RFC 7518 section 3.2).
type Claims struct {
	TenantID string `json:"tid"`
	jwt.RegisteredClaims
}

// Sessions issues and verifies session tokens. A token is valid while its signature,
// expiry and its row in the sessions table all hold, so logout can end it early.
type Sessions struct {
	store  SessionStore
	users  *tenants.Service
	secret []byte
	now    func() time.Time
	log    *slog.Logger

	refusals sync.WaitGroup // refused sign-ins being recorded (recordRefusal)
}

// NewSessions returns Sessions over store signing with secret (at least 32 bytes).
// now and log may be nil (time.Now, slog.Default()).
func NewSessions(store SessionStore, users *tenants.Service, secret []byte, now func() time.Time, log *slog.Logger) *Sessions {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.Default()
	}
	return &Sessions{store: store, users: users, secret: secret, now: now, log: log}
}

// Wait blocks until every refused sign-in being recorded is; call it before closing
// the database.
func (s *Sessions) Wait() { s.refusals.Wait() }

// recordRefusal records session.failed for u off the request's path, so that a wrong
// password for a known email is refused as fast as an unknown email is (the dummy
// hash of tenants.Service.Authenticate): the record's write must not tell an
// attacker which emails exist. The record commits in a transaction of its own; a
// failure is logged. Sign-in attempts, and so these writes, are bounded per client
// address by the sign-in rate limit.
func (s *Sessions) recordRefusal(ctx context.Context, u tenants.User) {
	s.refusals.Add(1)
	go func() {
		defer s.refusals.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := s.store.SignInRefused(ctx, u); err != nil {
			s.log.LogAttrs(ctx, slog.LevelError, "a refused sign-in could not be recorded in the audit log",
				slog.String("user", u.ID), slog.String("error", err.Error()))
		}
	}()
}

// Login checks email and password and returns a signed token and its expiry; the
// sign-in is recorded (session.created). A wrong password for one of a tenant's
// users is recorded too (session.failed, by recordRefusal), and committed although
// the request is refused: it is the one refused request the audit log keeps, because
// a refused sign-in changes nothing else and is what a tenant's auditor looks for
// first (docs/audit-log.md). An unknown email records nothing: it names no tenant.
// Errors: tenants.ErrInvalidCredentials, tenants.ErrTenantDisabled (the right
// password, its tenant disabled), or a store error.
func (s *Sessions) Login(ctx context.Context, email, password string) (string, time.Time, error) {
	u, err := s.users.Authenticate(ctx, email, password)
	if errors.Is(err, tenants.ErrInvalidCredentials) && u.ID != "" {
		s.recordRefusal(ctx, u)
	}
	if err != nil {
		return "", time.Time{}, err
	}
	now := s.now().UTC().Truncate(time.Second)
	exp := now.Add(SessionTTL)
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", time.Time{}, err
	}
	jti := hex.EncodeToString(raw[:])
	if err := s.store.CreateSession(ctx, Session{ID: sessionID(jti), UserID: u.ID, TenantID: u.TenantID,
		Email: u.Email, CreatedAt: now, ExpiresAt: exp}); err != nil {
		return "", time.Time{}, err
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, Claims{TenantID: u.TenantID, RegisteredClaims: jwt.RegisteredClaims{
		Subject: u.ID, ID: jti, IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(exp),
	}})
	signed, err := tok.SignedString(s.secret)
	if err != nil {
		return "", time.Time{}, err
	}
	return signed, exp, nil
}

// Verify returns the principal of token. Errors: ErrInvalidSession, or a store error.
func (s *Sessions) Verify(ctx context.Context, token string) (*Principal, error) {
	var claims Claims
	_, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return s.secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithTimeFunc(s.now), jwt.WithExpirationRequired(), jwt.WithIssuedAt())
	if err != nil || claims.ID == "" || claims.Subject == "" || claims.TenantID == "" {
		return nil, ErrInvalidSession
	}
	row, err := s.store.Session(ctx, sessionID(claims.ID))
	if errors.Is(err, ErrSessionNotFound) {
		return nil, ErrInvalidSession
	}
	if err != nil {
		return nil, err
	}
	// The row is authoritative: its expiry holds even for a token whose exp claim
	// says otherwise.
	if row.RevokedAt != nil || row.UserID != claims.Subject || row.TenantID != claims.TenantID ||
		!s.now().Before(row.ExpiresAt) {
		return nil, ErrInvalidSession
	}
	return &Principal{Kind: KindSession, TenantID: row.TenantID, CredentialID: row.UserID,
		SessionID: row.ID, Role: row.Role, Email: row.Email, Scopes: tenants.AllScopes,
		APIVersion: row.APIVersion, Appetite: row.Appetite}, nil
}

// sessionID is what the sessions table keys a token by: the SHA-256 of its jti, so
// the table holds nothing a token could be rebuilt from (the jti is 128 random bits;
// a fast digest suffices).
func sessionID(jti string) string {
	sum := sha256.Sum256([]byte(jti))
	return hex.EncodeToString(sum[:])
}

// EndUserSessions ends every session of userID but the one with ID except (a
// Principal's SessionID; empty: none), from the next request on. Called inside the
// transaction that deletes the user or changes their password.
func (s *Sessions) EndUserSessions(ctx context.Context, userID, except string) error {
	return s.store.RevokeUserSessions(ctx, userID, except, s.now().UTC())
}

// Logout revokes the session with id so its token stops working at once.
func (s *Sessions) Logout(ctx context.Context, id string) error {
	return s.store.RevokeSession(ctx, id, s.now().UTC())
}

// SessionSecret returns configured (JWT_SECRET) when set, at least 32 bytes;
// otherwise derived, the key riskapi derives from SECRET_KEY for signing sessions
// (secretkey.SignSessions), which no copy of the database holds, logging a warning:
// JWT_SECRET lets sessions outlive a change of SECRET_KEY.
func SessionSecret(configured string, derived []byte, log *slog.Logger) ([]byte, error) {
	if configured != "" {
		if len(configured) < 32 {
			return nil, errors.New("JWT_SECRET must be at least 32 bytes")
		}
		return []byte(configured), nil
	}
	log.Warn("JWT_SECRET is not set: sessions are signed with a key derived from SECRET_KEY")
	return derived, nil
}

// DeleteExpired deletes the rows of sessions expired before now and returns how many
// it deleted; their tokens are refused by their own expiry already.
func (s *Sessions) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	return s.store.DeleteExpiredSessions(ctx, now)
}
