// Package route is how an HTTP route declares its policy where it is registered:
// which API versions serve it (and so how its caller authenticates), the scope and
// role it needs, how it treats Idempotency-Key and what body it accepts. Each domain's
// *http package exports its []Route; internal/server turns every descriptor into the
// route's middleware chain and mounts it. The package also holds what every handler
// needs from a request: its tenant and its page (cursor, limit, envelope).
package route

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/upload"
)

// Versions says where a route is mounted, which is also how its caller
// authenticates. The zero value is invalid, so a forgotten field cannot make a route
// public.
type Versions uint8

const (
	// Unauthenticated: mounted at Path as is, no credential (sign-in, inbound
	// webhooks, health). Such a route authenticates in its handler if at all.
	Unauthenticated Versions = 1 << iota
	// V1: mounted under /v1, for browser sessions (JWT bearer or cookie).
	V1
	// V2: mounted under /v2, for API keys.
	V2
	// Both: mounted identically under /v1 and /v2.
	Both = V1 | V2
)

// BodyKind says what request body a route accepts and how much of it.
type BodyKind uint8

const (
	// JSONBody: up to the server's JSON limit (1 MiB unless configured). The default;
	// routes that read no body keep it too, as a bound on what a client may send.
	JSONBody BodyKind = iota
	// UploadBody: a multipart form up to the server's upload limit (MAX_UPLOAD_BYTES),
	// spooled to disk under Body.Form's rules as it is read (internal/upload).
	UploadBody
	// RawBody: up to Body.Limit bytes, read by the handler as they came (a webhook's
	// signature covers its exact bytes).
	RawBody
	// NoBodyLimit: the router bounds nothing (health and metrics routes, which read
	// no body and must answer whatever else is wrong).
	NoBodyLimit
)

// Body is a route's body policy.
type Body struct {
	Kind BodyKind
	// Limit bounds a RawBody, bytes. Required for RawBody, unused otherwise.
	Limit int64
	// Form lists the form names an UploadBody accepts (upload.Config.Rules). Required
	// for UploadBody, unused otherwise.
	Form map[string]upload.Rule
}

// Route is one endpoint and its whole policy. The zero values of the policy fields
// are the common case: a JSON body, Idempotency-Key honoured on writes, no scope, not
// admin-only.
type Route struct {
	// Method is the HTTP method. HEAD is served by every GET route (see server).
	Method string
	// Path is in Echo's syntax ("/risks/:id"): relative to the version prefix for V1
	// and V2 routes, the full path for Unauthenticated ones.
	Path    string
	Handler echo.HandlerFunc
	// Versions is where the route is mounted and how its caller authenticates.
	// Required.
	Versions Versions
	// Scope is what the caller's credential must hold (docs/openapi.yaml lists it per
	// operation), refused with 403 FORBIDDEN; "" needs none. API keys hold the scopes
	// they were created with; session users hold every scope.
	Scope tenants.Scope
	// Admin restricts the route to callers for whom auth.Principal.Admin() holds,
	// refused with 403 FORBIDDEN. For /v1 administration routes.
	Admin bool
	// Idempotency is how a write treats Idempotency-Key (docs/idempotency.md).
	// Default idempotency.Supported.
	Idempotency idempotency.Policy
	// PerPrincipal makes the route's idempotency records the caller's own: the same
	// key from another user (or API key) of the tenant is another record, never a
	// replay or a 422. For routes on the caller's own account (/v1/me…). Default:
	// records are the tenant's.
	PerPrincipal bool
	// Body is what body the route accepts. Default: JSON up to the server's limit.
	Body Body
	// SignIn throttles the route per client address with the sign-in budget
	// (docs/errors.md, RATE_LIMITED) instead of per credential. Authenticated routes
	// are throttled per credential; other unauthenticated ones are not throttled.
	SignIn bool
	// PasswordCheck marks a route whose handler checks a password and reports a wrong
	// one (auth.NotePasswordRejected): its failures are counted per account and per
	// client network, and past the limit attempts get 429 whatever RATE_LIMIT_RPS
	// says (docs/security.md).
	PasswordCheck bool
	// Exists, when set, checks that what the request names exists before OncePer
	// and PerTenant count it, returning the route's not-found sentinel otherwise
	// (or another error): a request for nothing spends none of those limits (a
	// redelivery of an unknown event is 404, not a spent quota). Nil: no check.
	Exists func(c echo.Context) error
	// OncePer lets the route run at most once per OncePer for one resource (its
	// request path, within the caller's tenant); sooner is 429 RATE_LIMITED with
	// Retry-After, whatever RATE_LIMIT_RPS says. For a request whose work multiplies
	// (a redelivery to every endpoint). Zero: no such limit.
	OncePer time.Duration
	// Costly, when set, says whether a request of the route is a costly read: one
	// whose cost grows with the tenant's data, not the answer's size (a search, a
	// filter no index answers, an export; docs/register.md, "Costly reads"). A
	// tenant has at most TENANT_MAX_INFLIGHT costly reads in flight per instance;
	// one more is 429 CONCURRENCY_LIMITED. It runs after authentication and must
	// not fail: a request it cannot read is not costly (the handler refuses it).
	// Nil: never costly.
	Costly func(c echo.Context) bool
	// PerTenant, when its N is positive, lets one tenant call the route N times per
	// Per: N at once, then one every Per/N (a token bucket, as the rate limits);
	// sooner is 429 RATE_LIMITED with Retry-After, whatever RATE_LIMIT_RPS says. For
	// a request whose work multiplies, beside OncePer's bound on one resource.
	// Zero: no such limit.
	PerTenant Quota
	// StoreTimeout, when positive, bounds each store call of the route — each
	// statement and an unkeyed write's transaction — instead of the server's bound
	// (config.Leases.Store): for a write that is one long transaction by design (the
	// CSV import, IMPORT_TIMEOUT). A keyed request stays within its lease's handler
	// deadline whatever this says. Zero: the server's bound.
	StoreTimeout time.Duration
	// Resource is the resource type ("risk", "event") of the route's JSON request
	// and response bodies, which the edge translates between the request's API
	// version and the newest, the only one handlers speak (internal/apiversion). "":
	// the same in every version.
	Resource string
	// Untraced keeps the route's requests out of traces when tracing is on
	// (docs/tracing.md): for probes and scrapes, which a container or Prometheus makes
	// every few seconds and which would each be a trace of their own. Only for an
	// Unauthenticated route with a fixed path: the decision is made on the request's
	// path before routing. Default: traced.
	Untraced bool
}

// Quota is N calls per Per (route.Route.PerTenant).
type Quota struct {
	N   int
	Per time.Duration
}

// Check reports what makes r unmountable: a missing method, path or handler, no
// Versions, a credential policy on an unauthenticated route, a body without its
// parameters. The server refuses to start on it.
func (r Route) Check() error {
	where := r.Method + " " + r.Path
	switch {
	case r.Method == "" || r.Path == "" || r.Path[0] != '/' || r.Handler == nil:
		return fmt.Errorf("route %q: method, path (starting with /) and handler are required", where)
	case r.Versions == 0 || r.Versions&^(Unauthenticated|Both) != 0:
		return fmt.Errorf("route %q: Versions must be Unauthenticated, V1, V2 or Both", where)
	case r.Versions&Unauthenticated != 0 && (r.Versions != Unauthenticated || r.Scope != "" || r.Admin):
		return fmt.Errorf("route %q: an Unauthenticated route has no version, scope or role", where)
	case r.Admin && r.Versions&V2 != 0:
		return fmt.Errorf("route %q: admin-only routes are /v1 routes", where)
	case r.PerTenant.N > 0 && (r.PerTenant.Per <= 0 || r.Versions&Unauthenticated != 0):
		return fmt.Errorf("route %q: a PerTenant quota needs a positive Per and an authenticated route", where)
	case r.SignIn && r.Versions != Unauthenticated:
		return fmt.Errorf("route %q: only an unauthenticated route can be a sign-in route", where)
	case r.Body.Kind == RawBody && r.Body.Limit <= 0:
		return fmt.Errorf("route %q: a RawBody needs a positive Limit", where)
	case r.Body.Kind == UploadBody && r.Body.Form == nil:
		return fmt.Errorf("route %q: an UploadBody needs its Form rules", where)
	case r.Untraced && (r.Versions != Unauthenticated || strings.ContainsAny(r.Path, ":*")):
		return fmt.Errorf("route %q: only an unauthenticated route with a fixed path can be untraced", where)
	case r.Idempotency == idempotency.Required && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		return fmt.Errorf("route %q: reads ignore Idempotency-Key and cannot require it", where)
	}
	return nil
}

// AlwaysCostly is Route.Costly of a route every request of which is a costly read
// (an export).
func AlwaysCostly(echo.Context) bool { return true }
