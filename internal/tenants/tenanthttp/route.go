// Package tenanthttp is the HTTP adapter of tenant self-service (/v1, session users;
// docs/roles-and-credentials.md): the caller's own account (/me), and, for the
// tenant's admins, its users and API keys. Every ID is looked up within the caller's
// tenant, so another tenant's user or key is 404 like an absent one.
package tenanthttp

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/appetite"
	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/route"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/tenants/tenantview"
)

// Config wires the handlers.
type Config struct {
	// Tenants manages users and keys. Required.
	Tenants *tenants.Service
	// Sessions ends sessions when a user is removed or changes password. Required.
	Sessions *auth.Sessions
	// Appetite keeps the tenant's risk appetite (GET and PATCH /tenant). Required.
	Appetite *appetite.Store
}

type handlers struct{ Config }

// Routes declares the self-service routes. /me is every user's; the rest is
// admin-only (403 FORBIDDEN for members). POST /api-keys refuses Idempotency-Key
// (422 IDEMPOTENCY_UNSUPPORTED_ROUTE): its response carries the key's secret, which
// must never be kept in an idempotency record (docs/idempotency.md). Every other
// write honours the key.
func Routes(cfg Config) []route.Route {
	h := handlers{cfg}
	return []route.Route{
		{Method: http.MethodGet, Path: "/me", Handler: h.me, Versions: route.V1},
		{Method: http.MethodGet, Path: "/tenant", Handler: h.tenant, Versions: route.V1},
		{Method: http.MethodPatch, Path: "/tenant", Handler: h.patchTenant, Versions: route.V1, Admin: true},
		{Method: http.MethodPost, Path: "/tenant/api-version", Handler: h.moveAPIVersion, Versions: route.V1, Admin: true},
		{Method: http.MethodPost, Path: "/me/password", Handler: h.changePassword, Versions: route.V1, PerPrincipal: true,
			PasswordCheck: true},
		{Method: http.MethodGet, Path: "/users", Handler: h.listUsers, Versions: route.V1, Admin: true},
		{Method: http.MethodPost, Path: "/users", Handler: h.createUser, Versions: route.V1, Admin: true},
		{Method: http.MethodPatch, Path: "/users/:id", Handler: h.setRole, Versions: route.V1, Admin: true},
		{Method: http.MethodDelete, Path: "/users/:id", Handler: h.deleteUser, Versions: route.V1, Admin: true},
		{Method: http.MethodGet, Path: "/api-keys", Handler: h.listKeys, Versions: route.V1, Admin: true},
		{Method: http.MethodPost, Path: "/api-keys", Handler: h.createKey, Versions: route.V1, Admin: true,
			Idempotency: idempotency.Unsupported},
		{Method: http.MethodDelete, Path: "/api-keys/:id", Handler: h.revokeKey, Versions: route.V1, Admin: true},
		// Its response carries the new secret: no idempotency record may keep it.
		{Method: http.MethodPost, Path: "/api-keys/:id/roll", Handler: h.rollKey, Versions: route.V1, Admin: true,
			Idempotency: idempotency.Unsupported},
	}
}

func (h handlers) me(c echo.Context) error {
	p, err := route.Principal(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	u, err := h.Tenants.User(ctx, p.TenantID, p.CredentialID)
	if err != nil {
		return err
	}
	t, err := h.Tenants.GetTenant(ctx, p.TenantID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, meResponse{User: meUser{ID: u.ID, Email: u.Email, Role: u.Role},
		Tenant: meTenant{ID: t.ID, Name: t.Name}})
}

// changePassword ends every other session of the caller in the transaction that
// changes the password; the calling session stays.
func (h handlers) changePassword(c echo.Context) error {
	var req passwordRequest
	if err := jsonbody.DecodeRequest(c.Request(), &req); err != nil {
		return err
	}
	p, err := route.Principal(c)
	if err != nil {
		return err
	}
	err = h.Tenants.ChangePassword(c.Request().Context(), p.TenantID, p.CredentialID, req.CurrentPassword, req.NewPassword,
		func(ctx context.Context) error { return h.Sessions.EndUserSessions(ctx, p.CredentialID, p.SessionID) })
	if errors.Is(err, tenants.ErrWrongPassword) {
		auth.NotePasswordRejected(c)
	}
	if err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (h handlers) listUsers(c echo.Context) error {
	tenant, err := route.Account(c)
	if err != nil {
		return err
	}
	pg, err := route.PagingOf(c, ids.User)
	if err != nil {
		return err
	}
	us, more, err := h.Tenants.Users(c.Request().Context(), tenant, tenants.Page{Before: pg.After, Limit: pg.Limit})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, route.NewPage(us, more, func(u tenants.User) string { return u.ID }, tenantview.UserOf))
}

func (h handlers) createUser(c echo.Context) error {
	var req createUserRequest
	if err := jsonbody.DecodeRequest(c.Request(), &req); err != nil {
		return err
	}
	tenant, err := route.Account(c)
	if err != nil {
		return err
	}
	if err := req.validate(); err != nil {
		return err
	}
	u, err := h.Tenants.CreateUser(c.Request().Context(), tenant, req.Email, req.Password, tenants.Role(req.Role))
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, c.Request().URL.Path+"/"+u.ID)
	return c.JSON(http.StatusCreated, tenantview.UserOf(u))
}

func (h handlers) setRole(c echo.Context) error {
	var req roleRequest
	if err := jsonbody.DecodeRequest(c.Request(), &req); err != nil {
		return err
	}
	tenant, id, err := tenantAndID(c, ids.User)
	if err != nil {
		return err
	}
	role, err := req.role()
	if err != nil {
		return err
	}
	u, err := h.Tenants.SetRole(c.Request().Context(), tenant, id, role)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, tenantview.UserOf(u))
}

// deleteUser ends every session of the user in the transaction that removes them.
func (h handlers) deleteUser(c echo.Context) error {
	tenant, id, err := tenantAndID(c, ids.User)
	if err != nil {
		return err
	}
	err = h.Tenants.DeleteUser(c.Request().Context(), tenant, id,
		func(ctx context.Context) error { return h.Sessions.EndUserSessions(ctx, id, "") })
	if err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (h handlers) listKeys(c echo.Context) error {
	tenant, err := route.Account(c)
	if err != nil {
		return err
	}
	pg, err := route.PagingOf(c, ids.APIKey)
	if err != nil {
		return err
	}
	ks, more, err := h.Tenants.APIKeys(c.Request().Context(), tenant, tenants.Page{Before: pg.After, Limit: pg.Limit})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, route.NewPage(ks, more, func(k tenants.APIKey) string { return k.ID }, tenantview.APIKeyOf))
}

func (h handlers) createKey(c echo.Context) error {
	var req createKeyRequest
	if err := jsonbody.DecodeRequest(c.Request(), &req); err != nil {
		return err
	}
	tenant, err := route.Account(c)
	if err != nil {
		return err
	}
	scopes, err := req.scopes()
	if err != nil {
		return err
	}
	opts, err := req.options()
	if err != nil {
		return err
	}
	k, secret, err := h.Tenants.CreateAPIKeyWith(c.Request().Context(), tenant, req.Name, scopes, opts)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, c.Request().URL.Path+"/"+k.ID)
	return c.JSON(http.StatusCreated, createdKey{APIKey: tenantview.APIKeyOf(k), Key: secret})
}

func (h handlers) revokeKey(c echo.Context) error {
	tenant, id, err := tenantAndID(c, ids.APIKey)
	if err != nil {
		return err
	}
	if err := h.Tenants.RevokeAPIKey(c.Request().Context(), tenant, id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// rollKey answers the new key's secret once; the old secret keeps working for
// expiresIn seconds (docs/roles-and-credentials.md).
func (h handlers) rollKey(c echo.Context) error {
	var req rollKeyRequest
	if err := jsonbody.DecodeRequest(c.Request(), &req); err != nil {
		return err
	}
	tenant, id, err := tenantAndID(c, ids.APIKey)
	if err != nil {
		return err
	}
	overlap, err := req.overlap()
	if err != nil {
		return err
	}
	next, secret, old, err := h.Tenants.RollAPIKey(c.Request().Context(), tenant, id, overlap, req.NewKeyExpiresAt)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/v1/api-keys/"+next.ID)
	return c.JSON(http.StatusCreated, rolledKey{APIKey: tenantview.APIKeyOf(next), Key: secret, Previous: tenantview.APIKeyOf(old)})
}

// tenantAndID returns the caller's tenant and the :id parameter; an ID that is not
// of kind prefix is 404 without a query (tenants.ErrUserNotFound or
// ErrAPIKeyNotFound, rendered by the edge).
func tenantAndID(c echo.Context, prefix string) (string, string, error) {
	tenant, err := route.Account(c)
	if err != nil {
		return "", "", err
	}
	id := c.Param("id")
	if !ids.Valid(prefix, id) {
		if prefix == ids.User {
			return "", "", tenants.ErrUserNotFound
		}
		return "", "", tenants.ErrAPIKeyNotFound
	}
	return tenant, id, nil
}
