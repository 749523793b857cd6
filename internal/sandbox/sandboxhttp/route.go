// Package sandboxhttp is the HTTP adapter of a tenant's sandbox (docs/sandboxes.md):
// DELETE /v1/sandbox/data, for the tenant's admins.
package sandboxhttp

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/route"
	"github.com/riskapi/riskapi/internal/sandbox"
)

// Config wires the handlers.
type Config struct {
	// Store erases the sandbox's data. Required.
	Store sandbox.Store
}

type handlers struct{ Config }

// Routes declares the sandbox's routes. Erasing refuses Idempotency-Key (422
// IDEMPOTENCY_UNSUPPORTED_ROUTE): it erases the sandbox's idempotency records, the
// one its own key would be kept in among them; erasing twice is erasing once.
func Routes(cfg Config) []route.Route {
	h := handlers{cfg}
	return []route.Route{
		{Method: http.MethodDelete, Path: "/sandbox/data", Handler: h.erase, Versions: route.V1, Admin: true,
			Idempotency: idempotency.Unsupported},
	}
}

// erase erases the sandbox of the caller's tenant, whichever mode the session is in,
// and answers what it erased.
func (h handlers) erase(c echo.Context) error {
	tenant, err := route.Account(c)
	if err != nil {
		return err
	}
	out, err := h.Store.EraseData(c.Request().Context(), tenant)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}
