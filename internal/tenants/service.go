package tenants

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/ids"
)

// APIKeyPrefix starts every API key secret.
const APIKeyPrefix = "rk_"

// lastUsedEvery throttles last-used writes: a hot key costs one UPDATE a minute, not
// one per request.
const lastUsedEvery = time.Minute

// Service stores tenants, users and API keys.
type Service struct {
	db   *gorm.DB
	now  func() time.Time
	cost int

	mu       sync.Mutex
	lastSeen map[string]time.Time // key ID → last recorded use
	touches  sync.WaitGroup       // last-use writes in flight

	dummyOnce sync.Once
	dummy     []byte // see dummyHash
}

// Wait blocks until every last-use write in flight has ended; call it before
// closing the database.
func (s *Service) Wait() { s.touches.Wait() }

// NewService returns a Service over db. bcryptCost 0 means bcrypt.DefaultCost; tests
// pass bcrypt.MinCost. now may be nil (time.Now).
func NewService(db *gorm.DB, bcryptCost int, now func() time.Time) *Service {
	if bcryptCost == 0 {
		bcryptCost = bcrypt.DefaultCost
	}
	if now == nil {
		now = time.Now
	}
	return &Service{db: db, now: now, cost: bcryptCost, lastSeen: map[string]time.Time{}}
}

type tenantRow struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

func (tenantRow) TableName() string { return "tenants" }

type userRow struct {
	ID           string
	TenantID     string
	Email        string
	PasswordHash string
	CreatedAt    time.Time
}

func (userRow) TableName() string { return "users" }

type apiKeyRow struct {
	ID         string
	TenantID   string
	Name       string
	SecretHash string
	Scopes     string
	CreatedAt  time.Time
	RevokedAt  *time.Time
	LastUsedAt *time.Time
}

func (apiKeyRow) TableName() string { return "api_keys" }

func (r apiKeyRow) toKey() APIKey {
	var scopes []Scope
	for _, s := range strings.Split(r.Scopes, ",") {
		if s != "" {
			scopes = append(scopes, Scope(s))
		}
	}
	return APIKey{ID: r.ID, TenantID: r.TenantID, Name: r.Name, Scopes: scopes,
		CreatedAt: r.CreatedAt, RevokedAt: r.RevokedAt, LastUsedAt: r.LastUsedAt}
}

// CreateTenant creates a tenant named name (1–200 characters).
func (s *Service) CreateTenant(ctx context.Context, name string) (Tenant, error) {
	name = strings.TrimSpace(name)
	if name == "" || len([]rune(name)) > 200 {
		return Tenant{}, &InputError{Field: "name", Detail: "must be 1–200 characters"}
	}
	row := tenantRow{ID: ids.New(ids.Tenant), Name: name, CreatedAt: s.now().UTC()}
	if err := database.Conn(ctx, s.db).Create(&row).Error; err != nil {
		return Tenant{}, fmt.Errorf("create tenant: %w", database.Classify(err))
	}
	return Tenant{ID: row.ID, Name: row.Name, CreatedAt: row.CreatedAt}, nil
}

// GetTenant returns the tenant with id, or ErrNotFound.
func (s *Service) GetTenant(ctx context.Context, id string) (Tenant, error) {
	var row tenantRow
	err := database.Conn(ctx, s.db).Where("id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Tenant{}, ErrNotFound
	}
	if err != nil {
		return Tenant{}, fmt.Errorf("get tenant %s: %w", id, database.Classify(err))
	}
	return Tenant{ID: row.ID, Name: row.Name, CreatedAt: row.CreatedAt}, nil
}

// FindTenantByName returns the oldest tenant named name, or ErrNotFound.
func (s *Service) FindTenantByName(ctx context.Context, name string) (Tenant, error) {
	var row tenantRow
	err := database.Conn(ctx, s.db).Where("name = ?", name).Order("id").Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Tenant{}, ErrNotFound
	}
	if err != nil {
		return Tenant{}, fmt.Errorf("find tenant: %w", database.Classify(err))
	}
	return Tenant{ID: row.ID, Name: row.Name, CreatedAt: row.CreatedAt}, nil
}

// CreateUser adds a user to tenantID. The email is normalised to lower case; the
// password (8–72 bytes, bcrypt's limit) is stored only as a bcrypt hash. Errors:
// ErrNotFound (no such tenant), ErrEmailTaken, *InputError.
func (s *Service) CreateUser(ctx context.Context, tenantID, email, password string) (User, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email {
		return User{}, &InputError{Field: "email", Detail: "must be an email address"}
	}
	if len(password) < 8 || len(password) > 72 {
		return User{}, &InputError{Field: "password", Detail: "must be 8–72 bytes"}
	}
	if _, err := s.GetTenant(ctx, tenantID); err != nil {
		return User{}, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.cost)
	if err != nil {
		return User{}, fmt.Errorf("hash password: %w", err)
	}
	row := userRow{ID: ids.New(ids.User), TenantID: tenantID, Email: email,
		PasswordHash: string(hash), CreatedAt: s.now().UTC()}
	if err := database.Conn(ctx, s.db).Create(&row).Error; err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return User{}, ErrEmailTaken
		}
		return User{}, fmt.Errorf("create user: %w", database.Classify(err))
	}
	return User{ID: row.ID, TenantID: row.TenantID, Email: row.Email, CreatedAt: row.CreatedAt}, nil
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
// ErrInvalidCredentials whichever part is wrong.
func (s *Service) Authenticate(ctx context.Context, email, password string) (User, error) {
	var row userRow
	err := database.Conn(ctx, s.db).Where("email = ?", strings.ToLower(strings.TrimSpace(email))).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		_ = bcrypt.CompareHashAndPassword(s.dummyHash(), []byte(password))
		return User{}, ErrInvalidCredentials
	}
	if err != nil {
		return User{}, fmt.Errorf("find user: %w", database.Classify(err))
	}
	if bcrypt.CompareHashAndPassword([]byte(row.PasswordHash), []byte(password)) != nil {
		return User{}, ErrInvalidCredentials
	}
	return User{ID: row.ID, TenantID: row.TenantID, Email: row.Email, CreatedAt: row.CreatedAt}, nil
}

// CreateAPIKey issues a key for tenantID with scopes and returns it with its secret
// ("rk_" + 43 base64url characters, 256 bits of entropy). The secret is returned this
// once; only its SHA-256 digest is stored. Errors: ErrNotFound, *InputError.
func (s *Service) CreateAPIKey(ctx context.Context, tenantID, name string, scopes []Scope) (APIKey, string, error) {
	if len(scopes) == 0 {
		return APIKey{}, "", &InputError{Field: "scopes", Detail: "at least one scope is required"}
	}
	if len([]rune(name)) > 200 {
		return APIKey{}, "", &InputError{Field: "name", Detail: "must be at most 200 characters"}
	}
	if _, err := s.GetTenant(ctx, tenantID); err != nil {
		return APIKey{}, "", err
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return APIKey{}, "", err
	}
	secret := APIKeyPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	strs := make([]string, len(scopes))
	for i, sc := range scopes {
		strs[i] = string(sc)
	}
	row := apiKeyRow{ID: ids.New(ids.APIKey), TenantID: tenantID, Name: name,
		SecretHash: hashSecret(secret), Scopes: strings.Join(strs, ","), CreatedAt: s.now().UTC()}
	if err := database.Conn(ctx, s.db).Create(&row).Error; err != nil {
		return APIKey{}, "", fmt.Errorf("create api key: %w", database.Classify(err))
	}
	return row.toKey(), secret, nil
}

// RevokeAPIKey revokes the key with id; later requests with it fail. Revoking a
// revoked key is a no-op. Errors: ErrNotFound.
func (s *Service) RevokeAPIKey(ctx context.Context, id string) error {
	res := database.Conn(ctx, s.db).Model(&apiKeyRow{}).Where("id = ?", id).
		Update("revoked_at", gorm.Expr("COALESCE(revoked_at, ?)", s.now().UTC()))
	if res.Error != nil {
		return fmt.Errorf("revoke api key: %w", database.Classify(res.Error))
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// VerifyAPIKey returns the live key whose secret is secret, or ErrInvalidCredentials
// (unknown, malformed or revoked). It records the key's last use at most once a
// minute per process.
func (s *Service) VerifyAPIKey(ctx context.Context, secret string) (APIKey, error) {
	if !strings.HasPrefix(secret, APIKeyPrefix) || len(secret) > 200 {
		return APIKey{}, ErrInvalidCredentials
	}
	var row apiKeyRow
	err := database.Conn(ctx, s.db).Where("secret_hash = ?", hashSecret(secret)).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return APIKey{}, ErrInvalidCredentials
	}
	if err != nil {
		return APIKey{}, fmt.Errorf("verify api key: %w", database.Classify(err))
	}
	if row.RevokedAt != nil {
		return APIKey{}, ErrInvalidCredentials
	}
	s.touch(ctx, row.ID)
	return row.toKey(), nil
}

func (s *Service) touch(ctx context.Context, keyID string) {
	now := s.now().UTC()
	s.mu.Lock()
	last, seen := s.lastSeen[keyID]
	if seen && now.Sub(last) < lastUsedEvery {
		s.mu.Unlock()
		return
	}
	s.lastSeen[keyID] = now
	s.mu.Unlock()
	// Best effort and off the request's path: bookkeeping must neither fail a
	// request nor make a read wait for SQLite's write lock.
	s.touches.Add(1)
	go func() {
		defer s.touches.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = s.db.WithContext(ctx).Model(&apiKeyRow{}).Where("id = ?", keyID).Update("last_used_at", now).Error
	}()
}

// hashSecret is SHA-256, not bcrypt: the secret has 256 bits of entropy, so a fast
// digest is safe and lets a key be found by an indexed lookup.
func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
