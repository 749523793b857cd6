package route

import (
	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/problem"
)

// Principal returns the request's authenticated caller. Errors: 401 UNAUTHENTICATED
// when there is none — a route mounted without authentication fails closed instead
// of panicking or serving an empty tenant.
func Principal(c echo.Context) (*auth.Principal, error) {
	if p := auth.FromContext(c.Request().Context()); p != nil && p.TenantID != "" {
		return p, nil
	}
	return nil, problem.New(problem.Unauthenticated, "authentication required")
}

// Tenant returns the data scope of the request's caller: the scope of everything
// the request reads or writes, taken from its credential, never from input — the
// tenant in live mode, its sandbox in test mode (auth.Principal.Scope). Errors: as
// Principal.
func Tenant(c echo.Context) (string, error) {
	p, err := Principal(c)
	if err != nil {
		return "", err
	}
	return p.Scope, nil
}

// Account returns the caller's tenant whatever the mode: the owner of its users, API
// keys and settings, which live and test mode share. Errors: as Principal.
func Account(c echo.Context) (string, error) {
	p, err := Principal(c)
	if err != nil {
		return "", err
	}
	return p.TenantID, nil
}
