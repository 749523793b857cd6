// Package auth authenticates riskapi's two kinds of caller — browser sessions (JWT,
// /v1) and API keys (/v2) — and puts the resulting Principal in the request context.
// The tenant of every request comes from its credential here, never from input.
package auth

import (
	"context"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/tenants"
)

// Kind says how a principal authenticated.
type Kind string

// The two kinds of credential.
const (
	KindSession Kind = "session"
	KindAPIKey  Kind = "api_key"
)

// Principal is the authenticated caller of a request.
type Principal struct {
	Kind Kind
	// TenantID is the caller's account: its users, API keys, sessions and settings.
	TenantID string
	// Scope is the tenant whose data the request reads and writes (route.Tenant,
	// every store's tenant_id): TenantID itself in live mode, its sandbox
	// (ids.SandboxOf) in test mode (docs/sandboxes.md).
	Scope string
	// Livemode is false for a test key, or a session that asked for test data
	// (ModeHeader).
	Livemode bool
	// CredentialID is the API key ID or the session user's ID: the unit that rate
	// limits count against.
	CredentialID string
	// SessionID is the stored ID of the session (the digest of the JWT "jti";
	// sessions only), what logout revokes.
	SessionID string
	// Role is the session user's current role; empty for API keys, which manage
	// nothing.
	Role   tenants.Role
	Scopes []tenants.Scope
	// Email is the session user's address (read with the session); empty for API
	// keys. The audit log names the actor by it.
	Email string
	// APIVersion is the tenant's pinned API version, read with the credential: the
	// version of a request that names none (docs/api-versions.md).
	APIVersion string
	// Appetite is the data scope's risk appetite, read with the credential (an API
	// key or a session) on this request; nil when it was not (a test key, a session
	// in test mode): a scored write then reads it itself (docs/register.md, Appetite).
	Appetite *tenants.StoredAppetite
}

// Has reports whether p carries scope.
func (p *Principal) Has(scope tenants.Scope) bool { return slices.Contains(p.Scopes, scope) }

// Admin reports whether p may use a tenant's administration routes (route.Route's
// Admin flag): a session user whose role, read with the session on this request, is
// admin (docs/roles-and-credentials.md). API keys never are.
func (p *Principal) Admin() bool { return p.Kind == KindSession && p.Role == tenants.RoleAdmin }

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the request's principal, or nil before authentication.
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

// TenantID returns the data scope of c's principal (Principal.Scope: the tenant or
// its sandbox); it is the idempotency scope, so live and test keys are apart.
// Errors: UNAUTHENTICATED when c carries no principal.
func TenantID(c echo.Context) (string, error) {
	if p := FromContext(c.Request().Context()); p != nil {
		return p.Scope, nil
	}
	return "", problem.New(problem.Unauthenticated, "authentication required")
}

// CredentialID returns the ID of the request's credential (the session user or the
// API key): the idempotency scope of records that belong to their caller
// (route.Route.PerPrincipal). IDs are unique across tenants and never equal a tenant
// ID, so such a record is apart from every tenant-wide one. Errors: 401
// UNAUTHENTICATED before authentication.
func CredentialID(c echo.Context) (string, error) {
	if p := FromContext(c.Request().Context()); p != nil && p.CredentialID != "" {
		return p.CredentialID, nil
	}
	return "", problem.New(problem.Unauthenticated, "authentication required")
}

// passwordRejectedKey is the echo.Context key NotePasswordRejected sets.
const passwordRejectedKey = "riskapi.password-rejected"

// NotePasswordRejected records that the request's password check failed (a wrong
// password at sign-in, a wrong current password at a password change): the route's
// throttle counts it against the account and the client network.
func NotePasswordRejected(c echo.Context) { c.Set(passwordRejectedKey, true) }

// PasswordRejected reports whether NotePasswordRejected was called for c.
func PasswordRejected(c echo.Context) bool {
	v, _ := c.Get(passwordRejectedKey).(bool)
	return v
}

// Actor is p as the author of the changes it makes (internal/changes): a session's
// user or an API key.
func (p *Principal) Actor() changes.Actor {
	if p.Kind == KindSession {
		return changes.Actor{Type: changes.ActorUser, ID: p.CredentialID, Email: p.Email}
	}
	return changes.Actor{Type: changes.ActorAPIKey, ID: p.CredentialID}
}

// inMode sets p's data scope for mode, and returns p. The appetite read with the
// credential is its tenant's: a sandbox's is its own, so p keeps it only in live
// mode.
func (p *Principal) inMode(mode tenants.Mode) *Principal {
	p.Scope, p.Livemode = mode.Scope(p.TenantID), mode != tenants.ModeTest
	if p.Scope != p.TenantID {
		p.Appetite = nil
	}
	return p
}

// setPrincipal puts p in c's request context, and p as the author of the changes the
// request makes.
func setPrincipal(c echo.Context, p *Principal) {
	ctx := changes.WithActor(WithPrincipal(c.Request().Context(), p), p.Actor())
	c.SetRequest(c.Request().WithContext(ctx))
}
