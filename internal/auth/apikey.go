package auth

import (
	"errors"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/tenants"
)

// APIKeys authenticates /v2 requests by "Authorization: Bearer rk_…". A missing,
// malformed, unknown or revoked key is 401 UNAUTHENTICATED; one past its expiresAt
// (or its roll's overlap) 401 API_KEY_EXPIRED; one used from an address outside its
// allowedCidrs (the client address as TRUSTED_PROXIES defines it, c.RealIP) 403
// IP_NOT_ALLOWED; the store failing is passed on (503 at the edge).
func APIKeys(svc *tenants.Service) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			secret, ok := bearer(c)
			if !ok {
				return challenge(c, "send an API key as Authorization: Bearer rk_…")
			}
			key, err := svc.VerifyAPIKey(c.Request().Context(), secret)
			if errors.Is(err, tenants.ErrInvalidCredentials) {
				if !strings.HasPrefix(secret, tenants.APIKeyPrefix) && strings.Count(secret, ".") == 2 { // a JWT
					return challenge(c, "this is a session token: sessions authenticate /v1 routes; /v2 takes an API key (rk_…)")
				}
				return challenge(c, "the API key is invalid or revoked")
			}
			if errors.Is(err, tenants.ErrAPIKeyExpired) {
				c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="riskapi", error="invalid_token"`)
				return problem.New(problem.APIKeyExpired, "this API key expired at %s; use the key that replaced it, or create one",
					key.ExpiresAt.UTC().Format(time.RFC3339))
			}
			if err != nil {
				return err
			}
			if err := svc.CheckAddress(c.Request().Context(), key, c.RealIP()); err != nil {
				return err
			}
			setPrincipal(c, (&Principal{Kind: KindAPIKey, TenantID: key.TenantID, CredentialID: key.ID,
				Scopes: key.Scopes, APIVersion: key.TenantAPIVersion, Appetite: key.TenantAppetite}).inMode(key.Mode))
			return next(c)
		}
	}
}

// challenge refuses c with 401 UNAUTHENTICATED and detail, carrying the
// WWW-Authenticate header that RFC 9110 section 15.5.2 requires of every 401.
func challenge(c echo.Context, detail string) error {
	c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="riskapi"`)
	return problem.New(problem.Unauthenticated, "%s", detail)
}

// bearer returns the token of an "Authorization: Bearer <token>" header.
func bearer(c echo.Context) (string, bool) {
	h := c.Request().Header.Get(echo.HeaderAuthorization)
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
