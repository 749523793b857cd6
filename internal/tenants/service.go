package tenants

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"github.com/riskapi/riskapi/internal/apiversion"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/problem"
)

// APIKeyPrefix starts every API key secret. Keys made before modes existed are
// "rk_" and a random part, and live; newer ones say their mode: LivePrefix or
// TestPrefix (docs/sandboxes.md).
const APIKeyPrefix = "rk_"

// The prefixes of a new key's secret, by mode (Stripe's sk_live_, sk_test_). Only a
// reader's hint: the stored mode decides what a key reaches.
const (
	LivePrefix = APIKeyPrefix + "live_"
	TestPrefix = APIKeyPrefix + "test_"
)

// lastUsedEvery throttles last-used writes: a hot key costs one UPDATE a minute, not
// one per request.
const lastUsedEvery = time.Minute

// Service holds the rules of tenants, users and API keys over a Store.
type Service struct {
	store Store
	now   func() time.Time
	cost  int

	mu       sync.Mutex
	lastSeen map[string]time.Time // key ID → last recorded use
	touches  sync.WaitGroup       // last-use writes in flight

	dummyOnce sync.Once
	dummy     []byte // see dummyHash

	// UserDeleted, when set, runs in the transaction that deletes u, after the
	// deletion: what else refers to the user lets go of them there (risks.Service.
	// DisownUser: their risks get a name owner), so that nothing names a user that
	// is gone. Its error undoes the deletion.
	UserDeleted func(ctx context.Context, u User) error
}

// timestamp is now as every timestamp of the API is: UTC, to the microsecond
// (docs/openapi.yaml), which PostgreSQL keeps too, so a time reads back as it was
// returned.
func (s *Service) timestamp() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// Wait blocks until every last-use write in flight has ended; call it before
// closing the database.
func (s *Service) Wait() { s.touches.Wait() }

// NewService returns a Service over store. bcryptCost 0 means bcrypt.DefaultCost;
// tests pass bcrypt.MinCost. now may be nil (time.Now).
func NewService(store Store, bcryptCost int, now func() time.Time) *Service {
	if bcryptCost == 0 {
		bcryptCost = bcrypt.DefaultCost
	}
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, now: now, cost: bcryptCost, lastSeen: map[string]time.Time{}}
}

// CreateTenant creates a tenant named name (1–200 characters), pinned to the
// newest API version. Errors: VALIDATION_FAILED naming "name".
func (s *Service) CreateTenant(ctx context.Context, name string) (Tenant, error) {
	return s.CreateTenantAt(ctx, name, apiversion.API.Newest())
}

// CreateTenantAt creates a tenant named name pinned to version: a tenant whose
// clients were written for an older version (the tests written before versions).
// Errors as CreateTenant.
func (s *Service) CreateTenantAt(ctx context.Context, name string, version apiversion.Version) (Tenant, error) {
	name = strings.TrimSpace(name)
	if name == "" || len([]rune(name)) > 200 {
		return Tenant{}, problem.Invalid("name", "must be 1–200 characters")
	}
	t := Tenant{ID: ids.New(ids.Tenant), Name: name, CreatedAt: s.timestamp(), APIVersion: string(version)}
	if err := s.store.CreateTenant(ctx, t); err != nil {
		return Tenant{}, err
	}
	return t, nil
}

// GetTenant returns the tenant with id, or ErrTenantNotFound.
func (s *Service) GetTenant(ctx context.Context, id string) (Tenant, error) {
	return s.store.Tenant(ctx, id)
}

// FindTenantByName returns the oldest tenant named name, or ErrTenantNotFound.
func (s *Service) FindTenantByName(ctx context.Context, name string) (Tenant, error) {
	return s.store.TenantByName(ctx, name)
}

// dummyHash keeps a failed login for an unknown email as slow as a wrong password:
// a hash at the service's own cost (a package-level one at bcrypt's default cost was
// slower than real hashes at any other cost, and cost every process at start-up).
func (s *Service) dummyHash() []byte {
	s.dummyOnce.Do(func() {
		s.dummy, _ = bcrypt.GenerateFromPassword([]byte("riskapi-no-such-user"), s.cost)
	})
	return s.dummy
}

// Authenticate checks email and password and returns the user, or
// ErrInvalidCredentials whichever part is wrong. With a wrong password it returns
// the user too, whose refused sign-in is recorded (docs/audit-log.md); callers
// must not tell the client which part was wrong. The right password of a user
// whose tenant is disabled gets ErrTenantDisabled and no user; a wrong one gets
// ErrInvalidCredentials and no user, as a disabled tenant records nothing.
func (s *Service) Authenticate(ctx context.Context, email, password string) (User, error) {
	u, hash, err := s.store.UserByEmail(ctx, strings.ToLower(strings.TrimSpace(email)))
	if errors.Is(err, ErrUserNotFound) {
		_ = bcrypt.CompareHashAndPassword(s.dummyHash(), []byte(password))
		return User{}, ErrInvalidCredentials
	}
	disabled := errors.Is(err, ErrTenantDisabled)
	if err != nil && !disabled {
		return User{}, err
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) != nil {
		if disabled {
			return User{}, ErrInvalidCredentials
		}
		return u, ErrInvalidCredentials
	}
	if disabled {
		return User{}, ErrTenantDisabled
	}
	return u, nil
}

// CreateAPIKey issues a live key (CreateModeAPIKey).
func (s *Service) CreateAPIKey(ctx context.Context, tenantID, name string, scopes []Scope) (APIKey, string, error) {
	return s.createAPIKey(ctx, tenantID, name, scopes, KeyOptions{})
}

// CreateModeAPIKey issues a key for tenantID with scopes in mode (CreateAPIKeyWith).
func (s *Service) CreateModeAPIKey(ctx context.Context, tenantID, name string, scopes []Scope, mode Mode) (APIKey, string, error) {
	return s.createAPIKey(ctx, tenantID, name, scopes, KeyOptions{Mode: mode})
}

func (s *Service) createAPIKey(ctx context.Context, tenantID, name string, scopes []Scope, o KeyOptions) (APIKey, string, error) {
	k, secret, err := s.newAPIKey(ctx, tenantID, name, scopes, o)
	if err != nil {
		return APIKey{}, "", err
	}
	if err := s.store.CreateAPIKey(ctx, k, hashSecret(secret)); err != nil {
		return APIKey{}, "", err
	}
	return k, secret, nil
}

// newAPIKey is a new key and its secret (LivePrefix or TestPrefix + 43 base64url
// characters, 256 bits of entropy), checked but not stored. Errors:
// ErrTenantNotFound, VALIDATION_FAILED naming "scopes" or "name".
func (s *Service) newAPIKey(ctx context.Context, tenantID, name string, scopes []Scope, o KeyOptions) (APIKey, string, error) {
	mode := o.Mode
	if len(scopes) == 0 {
		return APIKey{}, "", problem.Invalid("scopes", "at least one scope is required")
	}
	if len([]rune(name)) > 200 {
		return APIKey{}, "", problem.Invalid("name", "must be at most 200 characters")
	}
	if _, err := s.store.Tenant(ctx, tenantID); err != nil {
		return APIKey{}, "", err
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return APIKey{}, "", err
	}
	prefix := LivePrefix
	if mode == ModeTest {
		prefix = TestPrefix
	} else {
		mode = ModeLive
	}
	secret := prefix + base64.RawURLEncoding.EncodeToString(raw[:])
	// Whoever creates a key is recorded with it: its actions stay attributable after
	// its creator is gone (docs/roles-and-credentials.md).
	creator := changes.ActorFrom(ctx)
	creator.Email = ""
	k := APIKey{ID: ids.New(ids.APIKey), TenantID: tenantID, Name: name,
		Scopes: scopes, Mode: mode, CreatedBy: creator, CreatedAt: s.timestamp(), ExpiresAt: o.ExpiresAt, AllowedCidrs: o.AllowedCidrs}
	return k, secret, nil
}

// RevokeAPIKey revokes the tenant's key with id; later requests with it fail.
// Revoking a revoked key is a no-op. Errors: ErrAPIKeyNotFound (also for another
// tenant's key).
func (s *Service) RevokeAPIKey(ctx context.Context, tenantID, id string) error {
	k, err := s.store.APIKeyByID(ctx, id)
	if err != nil {
		return err
	}
	if k.TenantID != tenantID {
		return ErrAPIKeyNotFound
	}
	return s.store.RevokeAPIKey(ctx, k, s.timestamp())
}

// RevokeAPIKeyByID revokes the key with id whatever its tenant: the operator's
// command (api apikey revoke). Errors: ErrAPIKeyNotFound.
func (s *Service) RevokeAPIKeyByID(ctx context.Context, id string) error {
	k, err := s.store.APIKeyByID(ctx, id)
	if err != nil {
		return err
	}
	return s.store.RevokeAPIKey(ctx, k, s.timestamp())
}

// APIKeys lists the tenant's keys newest first, revoked ones included; never their
// secrets, which are not stored.
func (s *Service) APIKeys(ctx context.Context, tenantID string, p Page) ([]APIKey, bool, error) {
	return s.store.APIKeys(ctx, tenantID, p)
}

// Tenants lists every tenant, oldest first (api tenant list).
func (s *Service) Tenants(ctx context.Context) ([]Tenant, error) { return s.store.Tenants(ctx) }

// SetTenantDisabled disables (true) or enables the tenant. From the next request
// on, its API keys and sessions are refused with 401 by every instance, and its
// users cannot sign in; nothing is deleted. Errors: ErrTenantNotFound.
func (s *Service) SetTenantDisabled(ctx context.Context, id string, disabled bool) error {
	var at *time.Time
	if disabled {
		now := s.timestamp()
		at = &now
	}
	// Under the tenant's lock, so that the state read is the one changed.
	return s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.LockTenant(ctx, id); err != nil {
			return err
		}
		t, err := s.store.Tenant(ctx, id)
		if err != nil {
			return err
		}
		return s.store.SetTenantDisabled(ctx, t, at)
	})
}

// VerifyAPIKey returns the live key whose secret is secret, or ErrInvalidCredentials
// (unknown, malformed or revoked), or ErrAPIKeyExpired (past its expiresAt, the
// first such refusal recorded as api_key.expired). The key's last use is recorded
// by CheckAddress once its network is allowed: a refused request is no use.
func (s *Service) VerifyAPIKey(ctx context.Context, secret string) (APIKey, error) {
	if !strings.HasPrefix(secret, APIKeyPrefix) || len(secret) > 200 {
		return APIKey{}, ErrInvalidCredentials
	}
	k, err := s.store.APIKeyBySecretHash(ctx, hashSecret(secret))
	if errors.Is(err, ErrAPIKeyNotFound) {
		return APIKey{}, ErrInvalidCredentials
	}
	if err != nil {
		return APIKey{}, err
	}
	if k.RevokedAt != nil {
		return APIKey{}, ErrInvalidCredentials
	}
	if k.Expired(s.now()) {
		return k, s.expired(ctx, k)
	}
	return k, nil
}

// touch records keyID's last use at most once a minute per process (and the
// store, once a minute whatever the instance): a hot key costs no write per
// request.
func (s *Service) touch(ctx context.Context, keyID string) {
	if !s.throttle(keyID, lastUsedEvery) {
		return
	}
	now := s.timestamp()
	// Best effort and off the request's path: bookkeeping must neither fail a
	// request nor make a read wait for SQLite's write lock.
	s.background(ctx, func(ctx context.Context) error { return s.store.TouchAPIKey(ctx, keyID, now) })
}

// hashSecret is SHA-256, not bcrypt: the secret has 256 bits of entropy, so a fast
// digest is safe and lets a key be found by an indexed lookup.
func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
