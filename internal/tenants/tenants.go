// Package tenants owns the accounts side of riskapi: tenants, their users and their
// API keys. Every other row in riskapi belongs to a tenant created here.
//
// Secrets never leave this package in stored form: passwords are kept as bcrypt
// hashes, API keys as SHA-256 digests of high-entropy secrets. Storage is behind
// Store (internal/tenants/tenantstore); this package knows nothing of SQL or HTTP.
package tenants

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/problem"
)

// Scope is a permission an API key carries.
type Scope string

// The scopes of the contract (docs/openapi.yaml, securitySchemes).
const (
	ScopeRisksRead  Scope = "risks:read"
	ScopeRisksWrite Scope = "risks:write"
	// ScopeRequestsRead reads the request log and inspects idempotency keys
	// (docs/requests.md). Keys created before it existed do not hold it.
	ScopeRequestsRead Scope = "requests:read"
	// ScopeEventsRead reads events (docs/events.md). Keys created before it existed
	// do not hold it.
	ScopeEventsRead Scope = "events:read"
	// ScopeAuditRead reads the audit log and exports it (docs/audit-log.md). Keys
	// created before it existed do not hold it.
	ScopeAuditRead Scope = "audit:read"
)

// scopes is the one list of scopes, each with what it allows (help and docs say
// it in these words): AllScopes, Allows and every message naming the scopes are
// built from it. A new scope is a constant above and a row here.
var scopes = []struct {
	scope  Scope
	allows string
}{
	{ScopeRisksRead, "list and read risks and their attachments, download attachment content"},
	{ScopeRisksWrite, "create, change and delete risks; upload attachments"},
	{ScopeRequestsRead, "read the tenant's request log and inspect idempotency keys (docs/requests.md)"},
	{ScopeEventsRead, "list and read the tenant's events (docs/events.md)"},
	{ScopeAuditRead, "read and export the tenant's audit log (docs/audit-log.md)"},
}

// AllScopes lists every scope, in the order of the contract; session users hold all
// of them.
var AllScopes = func() []Scope {
	out := make([]Scope, len(scopes))
	for i, s := range scopes {
		out[i] = s.scope
	}
	return out
}()

// Allows says in one line what the scope lets an API key do; "" for an unknown scope.
func (s Scope) Allows() string {
	for _, r := range scopes {
		if r.scope == s {
			return r.allows
		}
	}
	return ""
}

// ParseScopes parses a comma-separated list such as "risks:read,risks:write"
// (blanks around names are ignored). Errors: as ScopesOf.
func ParseScopes(s string) ([]Scope, error) {
	var names []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			names = append(names, part)
		}
	}
	return ScopesOf(names)
}

// ScopesOf returns the scopes named, without repeats, in their order. Errors: a
// VALIDATION_FAILED *problem.Problem naming "scopes" for an empty list or an
// unknown scope.
func ScopesOf(names []string) ([]Scope, error) {
	var out []Scope
	for _, name := range names {
		sc := Scope(name)
		if !slices.Contains(AllScopes, sc) {
			return nil, problem.Invalid("scopes", fmt.Sprintf("unknown scope %q (want one of %s)", name, scopeNames()))
		}
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	if len(out) == 0 {
		return nil, problem.Invalid("scopes", "at least one scope is required")
	}
	return out, nil
}

// Tenant is an isolated customer account.
type Tenant struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"-"`
	// DisabledAt is when an operator disabled the tenant, or nil. A disabled
	// tenant's keys and sessions are refused; nothing of it is deleted.
	DisabledAt *time.Time `json:"-"`
	// APIVersion is the tenant's pinned API version: the version of a request that
	// names none (docs/api-versions.md). The newest at creation.
	APIVersion string `json:"-"`
	// APIVersionReplaced is the version the pin's last move replaced, while moving
	// back to it is allowed; nil after a move back, or before any move.
	APIVersionReplaced *string `json:"-"`
	// APIVersionMovedAt is when the pin last moved; nil before any move.
	APIVersionMovedAt *time.Time `json:"-"`
}

// Role is what a user may manage in their tenant (docs/roles-and-credentials.md).
type Role string

// The two roles: both read and write risks; only admins manage users, API keys and
// webhook sources.
const (
	RoleAdmin  Role = "admin"
	RoleMember Role = "member"
)

// ParseRole returns the role named s. Errors: VALIDATION_FAILED naming "role".
func ParseRole(s string) (Role, error) {
	if r := Role(s); r == RoleAdmin || r == RoleMember {
		return r, nil
	}
	return "", problem.Invalid("role", "must be admin or member")
}

// User is a person who signs in to a tenant with email and password.
type User struct {
	ID        string    `json:"id"`
	TenantID  string    `json:"tenantId"`
	Email     string    `json:"email"`
	Role      Role      `json:"role"`
	CreatedAt time.Time `json:"-"`
}

// Page selects one page of a newest-first list: up to Limit rows with IDs below
// Before (empty: from the newest). IDs are UUIDv7, so ID order is creation order.
type Page struct {
	Before string
	Limit  int
}

// Mode is whether a credential reaches the tenant's live data or its sandbox
// (docs/sandboxes.md).
type Mode string

// The two modes: a live key reaches only live data, a test key only the sandbox.
const (
	ModeLive Mode = "live"
	ModeTest Mode = "test"
)

// ParseMode returns the mode named s; "" is live. Errors: VALIDATION_FAILED naming
// field.
func ParseMode(field, s string) (Mode, error) {
	switch Mode(s) {
	case "", ModeLive:
		return ModeLive, nil
	case ModeTest:
		return ModeTest, nil
	}
	return "", problem.Invalid(field, "must be live or test")
}

// Scope returns the data scope mode gives tenant's credentials: the tenant itself
// when live, its sandbox (ids.SandboxOf) in test mode. Every store keys its rows by
// it, so the two modes' data are apart as two tenants' are.
func (m Mode) Scope(tenantID string) string {
	if m == ModeTest {
		return ids.SandboxOf(tenantID)
	}
	return tenantID
}

// APIKey is a tenant's credential for /v2. Its secret is known only at creation.
type APIKey struct {
	ID       string  `json:"id"`
	TenantID string  `json:"tenantId"`
	Name     string  `json:"name,omitempty"`
	Scopes   []Scope `json:"scopes"`
	// Mode is live or test; keys made before modes existed are live.
	Mode Mode `json:"mode"`
	// CreatedBy is the actor who created the key (changes.Actor, without email);
	// zero for keys created before the audit log existed.
	CreatedBy  changes.Actor `json:"-"`
	CreatedAt  time.Time     `json:"-"`
	RevokedAt  *time.Time    `json:"-"`
	LastUsedAt *time.Time    `json:"-"`
	// ExpiresAt is when the key stops working (nil: never): set at creation, or by
	// a roll to the end of its old secret's overlap (docs/roles-and-credentials.md).
	ExpiresAt *time.Time `json:"-"`
	// ExpiryRecorded reports whether its api_key.expired entry was written.
	ExpiryRecorded bool `json:"-"`
	// AllowedCidrs are the networks it may be used from; none: anywhere.
	AllowedCidrs []netip.Prefix `json:"-"`
	// RolledTo is the ID of the key a roll replaced it with; "" if never rolled.
	RolledTo string `json:"-"`
	// TenantAPIVersion is the key's tenant's pinned API version, read with the key
	// on each request (APIKeyBySecretHash only).
	TenantAPIVersion string `json:"-"`
	// TenantAppetite is the key's tenant's risk appetite as stored, read with the
	// key on each request (APIKeyBySecretHash on database/sql only; nil otherwise).
	TenantAppetite *StoredAppetite `json:"-"`
}

// StoredAppetite is a tenant's risk appetite as its row and its categories' rows
// hold it (internal/appetite keeps its rules), read with a credential so that a
// scored write need not read it again (docs/register.md, Appetite).
type StoredAppetite struct {
	// Overall is 1–25, or nil for none.
	Overall *int
	// Categories maps a category to its own appetite; empty for none.
	Categories map[string]int
	// Version is the appetite's version (appetite_version).
	Version int64
}

// StoredAppetiteOf returns the appetite a credential's statement read: the tenant's
// overall appetite (nil for none), its version, and its categories' appetites as
// the JSON object the statement aggregated them into (nil or "{}" for none).
func StoredAppetiteOf(overall *int64, version int64, categories *string) (*StoredAppetite, error) {
	a := &StoredAppetite{Version: version}
	if overall != nil {
		n := int(*overall)
		a.Overall = &n
	}
	// null (PostgreSQL's json_object_agg over no rows) or {} (SQLite's json_group_object).
	if categories != nil && *categories != "{}" {
		if err := json.Unmarshal([]byte(*categories), &a.Categories); err != nil {
			return nil, fmt.Errorf("category appetites: %w", err)
		}
	}
	return a, nil
}

// Expired reports whether k's expiry has passed at now.
func (k APIKey) Expired(now time.Time) bool { return k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) }

// Allows reports whether k may be used from addr (a client address as the server
// derives it, TRUSTED_PROXIES): true when k has no allowedCidrs, false for an
// address that does not parse.
func (k APIKey) Allows(addr string) bool {
	if len(k.AllowedCidrs) == 0 {
		return true
	}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	for _, p := range k.AllowedCidrs {
		if p.Contains(a) || p.Contains(a.Unmap()) {
			return true
		}
	}
	return false
}

// Has reports whether k carries scope.
func (k APIKey) Has(scope Scope) bool { return slices.Contains(k.Scopes, scope) }

// Errors returned by Service and Store. The HTTP edge maps the not-found ones to
// 404 NOT_FOUND in one table (internal/server); the CLI to usage errors.
var (
	// ErrTenantNotFound: no tenant with that ID or name.
	ErrTenantNotFound = errors.New("tenant not found")
	// ErrUserNotFound: no user with that ID or email (in that tenant).
	ErrUserNotFound = errors.New("user not found")
	// ErrAPIKeyNotFound: no API key with that ID or secret digest (in that tenant).
	ErrAPIKeyNotFound = errors.New("API key not found")
	// ErrTenantDisabled: the right password of a user whose tenant an operator has
	// disabled (api tenant disable). It is not a wrong password: it neither counts
	// towards the sign-in lockout nor says the password is wrong (docs/security.md).
	ErrTenantDisabled = errors.New("tenant disabled")
	// ErrAPIKeyExpired: the key's expiresAt has passed (401 API_KEY_EXPIRED).
	ErrAPIKeyExpired = errors.New("API key expired")
	// ErrInvalidCredentials: unknown email, wrong password, unknown or revoked key.
	// One error for all, so callers cannot tell which part was wrong.
	ErrInvalidCredentials = errors.New("invalid credentials")
	// ErrEmailTaken: a user with that email exists already (emails are unique across
	// tenants, as sign-in names no tenant). It is a VALIDATION_FAILED problem naming
	// "email".
	ErrEmailTaken = problem.Invalid("email", "is already registered")
)

// Store persists tenants, users and API keys. Methods write through the transaction
// their context carries, if any (internal/database.Conn). List methods return up to
// Page.Limit rows newest first and whether more follow. Every time returned is UTC.
type Store interface {
	// InTx runs fn in the transaction ctx carries, or in a new one that commits when
	// fn returns nil; fn's context carries it.
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
	// LockTenant holds the tenant's row until the transaction ends, so that checks
	// across its users (the last admin) cannot race. Errors: ErrTenantNotFound.
	LockTenant(ctx context.Context, id string) error

	// CreateTenant inserts t and its sandbox (ids.SandboxOf).
	CreateTenant(ctx context.Context, t Tenant) error
	// SetAPIVersion stores after's pin (APIVersion, APIVersionReplaced,
	// APIVersionMovedAt) over before's and records tenant.api_version_moved.
	SetAPIVersion(ctx context.Context, before, after Tenant) error
	// Tenant returns the tenant with id, or ErrTenantNotFound.
	Tenant(ctx context.Context, id string) (Tenant, error)
	// TenantByName returns the oldest tenant named name, or ErrTenantNotFound.
	TenantByName(ctx context.Context, name string) (Tenant, error)
	// Tenants lists every tenant, oldest first.
	Tenants(ctx context.Context) ([]Tenant, error)
	// SetTenantDisabled sets t's DisabledAt (nil enables it) and records
	// tenant.disabled or tenant.enabled — nothing when t is in that state already —,
	// or returns ErrTenantNotFound.
	SetTenantDisabled(ctx context.Context, t Tenant, at *time.Time) error

	// The writes below record their change (docs/audit-log.md) in their unit of work.

	// CreateUser inserts u with its bcrypt password hash, or returns ErrEmailTaken.
	CreateUser(ctx context.Context, u User, passwordHash string) error
	// UserByEmail returns the user with email and its password hash, or
	// ErrUserNotFound; for a user of a disabled tenant it returns both with
	// ErrTenantDisabled.
	UserByEmail(ctx context.Context, email string) (User, string, error)
	// UserByID returns the user with id (of any tenant) and its password hash, or
	// ErrUserNotFound.
	UserByID(ctx context.Context, id string) (User, string, error)
	// Users lists the tenant's users.
	Users(ctx context.Context, tenantID string, p Page) ([]User, bool, error)
	// CountAdmins counts the tenant's admins.
	CountAdmins(ctx context.Context, tenantID string) (int, error)
	// SetUserRole changes u's role (nothing when it has that role), or returns
	// ErrUserNotFound.
	SetUserRole(ctx context.Context, u User, role Role) error
	// SetPasswordHash replaces u's password hash, or returns ErrUserNotFound.
	SetPasswordHash(ctx context.Context, u User, hash string) error
	// DeleteUser deletes u, or returns ErrUserNotFound.
	DeleteUser(ctx context.Context, u User) error

	// CreateAPIKey inserts k with the SHA-256 digest (hex) of its secret.
	CreateAPIKey(ctx context.Context, k APIKey, secretHash string) error
	// APIKeyBySecretHash returns the key whose secret has that digest, revoked or
	// not, or ErrAPIKeyNotFound; a key of a disabled tenant reads as absent.
	APIKeyBySecretHash(ctx context.Context, secretHash string) (APIKey, error)
	// APIKeyByID returns the key with id (of any tenant), or ErrAPIKeyNotFound.
	APIKeyByID(ctx context.Context, id string) (APIKey, error)
	// APIKeys lists the tenant's keys, revoked ones included.
	APIKeys(ctx context.Context, tenantID string, p Page) ([]APIKey, bool, error)
	// RevokeAPIKey sets k's revocation time to at unless it is set already (then it
	// does and records nothing).
	RevokeAPIKey(ctx context.Context, k APIKey, at time.Time) error
	// TouchAPIKey records the key's last use at at, unless the use recorded is less
	// than a minute older (another instance's). It writes outside any transaction
	// ctx carries: bookkeeping never joins a request's unit of work.
	TouchAPIKey(ctx context.Context, id string, at time.Time) error
	// RollAPIKey makes old expire at expiresAt (or at its own expiry, if sooner),
	// names next as its successor and inserts next with the digest of its secret,
	// recording api_key.rolled and api_key.created; ErrAPIKeyRolled when old was
	// rolled or revoked meanwhile.
	RollAPIKey(ctx context.Context, old APIKey, expiresAt time.Time, next APIKey, secretHash string) error
	// RecordAPIKeyExpired records api_key.expired for k once: nothing when it is
	// recorded already (by another request or instance).
	RecordAPIKeyExpired(ctx context.Context, k APIKey, at time.Time) error
	// ExpiredAPIKeys returns up to limit unrevoked keys whose expiry passed at or
	// before now and is not recorded yet, of every tenant.
	ExpiredAPIKeys(ctx context.Context, now time.Time, limit int) ([]APIKey, error)
	// RecordAPIKeyRefused records api_key.refused for k (a request from an address
	// outside its allowedCidrs); it writes nothing else.
	RecordAPIKeyRefused(ctx context.Context, k APIKey) error
}

// scopeNames lists AllScopes for messages: "risks:read, risks:write, …".
func scopeNames() string {
	names := make([]string, len(AllScopes))
	for i, s := range AllScopes {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}
