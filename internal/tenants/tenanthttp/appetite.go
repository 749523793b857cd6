package tenanthttp

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/appetite"
	"github.com/riskapi/riskapi/internal/etag"
	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/route"
	"github.com/riskapi/riskapi/internal/tenants"
)

// appetitePatch is PATCH /v1/tenant's body (docs/register.md, Appetite).
type appetitePatch struct {
	RiskAppetite     jsonbody.Optional[jsonbody.Int] `json:"riskAppetite"`
	CategoryAppetite map[string]*jsonbody.Int        `json:"categoryAppetite"`
}

func (r appetitePatch) patch() appetite.Patch {
	p := appetite.Patch{SetOverall: r.RiskAppetite.Set}
	if r.RiskAppetite.Set && !r.RiskAppetite.Null {
		n := int(r.RiskAppetite.Value)
		p.Overall = &n
	}
	if r.CategoryAppetite != nil {
		p.Categories = map[string]*int{}
		for k, v := range r.CategoryAppetite {
			if v == nil {
				p.Categories[k] = nil
				continue
			}
			n := int(*v)
			p.Categories[k] = &n
		}
	}
	return p
}

// answerTenant answers 200 with the tenant t and the appetite a of the request's
// data scope, its version as the ETag (the one GET, PATCH and the pin's move share).
func (h handlers) answerTenant(c echo.Context, t tenants.Tenant, a appetite.Appetite) error {
	out := tenantOf(t, h.Tenants.Now())
	v := appetite.ViewOf(a)
	out.RiskAppetite, out.CategoryAppetite, out.AppetiteVersion = v.RiskAppetite, v.CategoryAppetite, a.Version
	c.Response().Header().Set("ETag", etag.Strong(strconv.FormatInt(a.Version, 10)))
	return c.JSON(http.StatusOK, out)
}

// patchTenant is PATCH /v1/tenant: the tenant's appetite, admin-only, honouring
// If-Match (the ETag of GET /v1/tenant) like a risk's writes.
func (h handlers) patchTenant(c echo.Context) error {
	var req appetitePatch
	if err := jsonbody.DecodeRequest(c.Request(), &req); err != nil {
		return err
	}
	l, given, err := etag.IfMatch(c.Request().Header)
	if err != nil {
		return problem.Invalid("If-Match", err.Error())
	}
	var ifMatch appetite.IfMatch
	if given {
		ifMatch = func(v int64) bool { return l.MatchStrong(strconv.FormatInt(v, 10)) }
	}
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	a, err := h.Appetite.Set(ctx, tenant, ifMatch, req.patch())
	var changed *appetite.ErrVersionChanged
	switch {
	case errors.As(err, &changed):
		return &problem.Problem{Code: problem.PreconditionFailed, Current: appetite.ViewOf(changed.Current),
			Detail: `If-Match names another version of the tenant's appetite: "current" holds it as stored now (ETag "` +
				strconv.FormatInt(changed.Current.Version, 10) + `")`}
	case err != nil:
		return err
	}
	account, err := route.Account(c)
	if err != nil {
		return err
	}
	t, err := h.Tenants.GetTenant(ctx, account)
	if err != nil {
		return err
	}
	return h.answerTenant(c, t, a)
}
