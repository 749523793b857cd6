package tenanthttp

import (
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/apiversion"
	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/route"
	"github.com/riskapi/riskapi/internal/tenants"
)

// tenantResponse is GET /v1/tenant: the caller's tenant and its API version pin
// (docs/api-versions.md).
type tenantResponse struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion"`
	// Rollback is the move back the pin allows now, or null.
	Rollback *rollback `json:"rollback"`
	// RiskAppetite and CategoryAppetite are the tenant's appetite (docs/register.md).
	RiskAppetite     *int           `json:"riskAppetite"`
	CategoryAppetite map[string]int `json:"categoryAppetite"`
	// AppetiteVersion is the appetite's version, also the response's ETag.
	AppetiteVersion int64 `json:"appetiteVersion"`
}

type rollback struct {
	Version string    `json:"version"`
	Until   time.Time `json:"until"`
}

type moveRequest struct {
	Version *string `json:"version"`
}

func tenantOf(t tenants.Tenant, now time.Time) tenantResponse {
	out := tenantResponse{ID: t.ID, Name: t.Name, APIVersion: t.APIVersion}
	if t.APIVersionReplaced != nil && t.APIVersionMovedAt != nil {
		if until := t.APIVersionMovedAt.Add(tenants.RollbackWindow).UTC(); now.Before(until) {
			out.Rollback = &rollback{Version: *t.APIVersionReplaced, Until: until}
		}
	}
	return out
}

// tenant is GET /v1/tenant. The tenant is the account's in either mode: its
// settings are shared by both (docs/sandboxes.md); the appetite is the data
// scope's, as the risks it is read against.
func (h handlers) tenant(c echo.Context) error {
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	account, err := route.Account(c)
	if err != nil {
		return err
	}
	t, err := h.Tenants.GetTenant(c.Request().Context(), account)
	if err != nil {
		return err
	}
	a, err := h.Appetite.Get(c.Request().Context(), tenant)
	if err != nil {
		return err
	}
	return h.answerTenant(c, t, a)
}

func (h handlers) moveAPIVersion(c echo.Context) error {
	var req moveRequest
	if err := jsonbody.DecodeRequest(c.Request(), &req); err != nil {
		return err
	}
	if req.Version == nil {
		return problem.Invalid("version", "is required")
	}
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	// The pinned version is the account's, shared by both modes (docs/sandboxes.md).
	account, err := route.Account(c)
	if err != nil {
		return err
	}
	t, err := h.Tenants.MoveAPIVersion(c.Request().Context(), apiversion.API, account, *req.Version)
	if err != nil {
		return err
	}
	a, err := h.Appetite.Get(c.Request().Context(), tenant)
	if err != nil {
		return err
	}
	return h.answerTenant(c, t, a)
}
