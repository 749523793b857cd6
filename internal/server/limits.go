package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/ratelimit"
	"github.com/riskapi/riskapi/internal/reqbody"
	"github.com/riskapi/riskapi/internal/route"
)

// bodyLimit refuses bodies over n bytes with 413: at once when Content-Length says
// so, otherwise as soon as reading passes n (http.MaxBytesReader), never buffering.
// A request without a body (a GET's http.NoBody) keeps it: wrapped, it would look
// like a body to bodyDeadline, whose read deadline then cancels the request's
// context when it expires (net/http's background read fails) — which cut every
// export streaming for longer than the body timeout (docs/performance.md).
func bodyLimit(n int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.ContentLength > n {
				return problem.New(problem.PayloadTooLarge, "the request body is larger than %d bytes", n)
			}
			if req.Body == nil || req.Body == http.NoBody {
				return next(c)
			}
			req.Body = http.MaxBytesReader(c.Response(), req.Body, n)
			return next(c)
		}
	}
}

// bodyDeadline gives a JSON or raw body d to arrive (reqbody.Deadline).
func bodyDeadline(d time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			reqbody.Deadline(c.Response(), c.Request(), d)
			return next(c)
		}
	}
}

// uploadPace keeps an upload arriving at min bytes per window (reqbody.MinRate).
func uploadPace(min int64, window time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			reqbody.MinRate(c.Response(), c.Request(), min, window)
			return next(c)
		}
	}
}

// Sign-in attempts per client network: 20 at once, then one a second. Each attempt
// costs a bcrypt comparison, so unlimited attempts would be both a way to guess
// across many accounts and a way to burn CPU; a correct password waits for this
// rate like any attempt (docs/security.md). On whenever rate limiting is
// (RATE_LIMIT_RPS > 0).
var loginLimit = ratelimit.Limit{RPS: 1, Burst: 20}

// limiter is one rate limit: a named policy, counted per key in a store shared by
// every instance (Redis) or kept by this one (memory).
type limiter struct {
	name   string // the policy's name in RateLimit-Policy and the store's keys
	limit  ratelimit.Limit
	store  ratelimit.Store
	key    func(c echo.Context) string
	detail string
	failed *failOpen
	policy string // the RateLimit-Policy field value
}

// newLimiter returns the middleware of a policy named name; limit.RPS 0 lets
// everything through.
func newLimiter(name string, limit ratelimit.Limit, store ratelimit.Store, failed *failOpen,
	key func(echo.Context) string, detail string) echo.MiddlewareFunc {
	if limit.RPS <= 0 {
		return func(next echo.HandlerFunc) echo.HandlerFunc { return next }
	}
	if limit.Burst <= 0 {
		limit.Burst = int(math.Ceil(limit.RPS))
	}
	failed.count.WithLabelValues(name) // the series exists, at 0, before the first failure
	l := &limiter{name: name, limit: limit, store: store, key: key, detail: detail, failed: failed,
		policy: fmt.Sprintf("%q;q=%d;w=%d", name, limit.Burst, ceilSeconds(limit.Window()))}
	return l.middleware
}

// middleware counts the request and answers 429 RATE_LIMITED with Retry-After when
// the bucket is empty. Every answer of a limited route carries the IETF httpapi
// RateLimit fields (draft-ietf-httpapi-ratelimit-headers-10, structured-field Lists
// of one Item): RateLimit-Policy (the quota q per window w seconds) and RateLimit (r
// remaining now; t seconds until additional quota is made available — the next
// request's worth, so on a 429 t is Retry-After — left out while the quota is
// whole, when none is to come). If the store cannot be reached the request goes
// through uncounted and without RateLimit (fail open): a Redis outage must not take
// the API down.
func (l *limiter) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		// A client that hangs up mid-check must neither go uncounted nor look like
		// the store failing (which lets requests through): the check is not
		// cancelled with the request; the store's own timeouts bound it.
		res, err := l.store.Allow(context.WithoutCancel(ctx), l.name+":"+l.key(c), l.limit)
		if err != nil {
			l.failed.record(ctx, l.name, err)
			return next(c)
		}
		h := c.Response().Header()
		h.Set("RateLimit-Policy", l.policy)
		h.Set("RateLimit", serviceLimit(l.name, l.limit, res))
		if !res.Allowed {
			return &problem.Problem{Code: problem.RateLimited, Detail: l.detail,
				RetryAfter: time.Duration(retryAfter(res)) * time.Second}
		}
		return next(c)
	}
}

func ceilSeconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }

// retryAfter is a refused request's Retry-After in whole seconds, at least 1.
func retryAfter(res ratelimit.Result) int { return max(1, ceilSeconds(res.RetryAfter)) }

// serviceLimit is the RateLimit field's Item for res (draft-ietf-httpapi-ratelimit-
// headers-10, Service Limit Item): "name";r=R;t=T. The bucket refills one request
// every 1/RPS seconds; res.ResetAfter is how long until it is full, so the next
// request's worth arrives after what is left of the current interval. t is left
// out when the bucket is full: no additional quota is to come.
func serviceLimit(name string, l ratelimit.Limit, res ratelimit.Result) string {
	if !res.Allowed { // what Retry-After says, which must not be earlier than t
		return fmt.Sprintf("%q;r=%d;t=%d", name, res.Remaining, retryAfter(res))
	}
	if res.ResetAfter <= 0 {
		return fmt.Sprintf("%q;r=%d", name, res.Remaining)
	}
	next := res.ResetAfter
	if interval := time.Duration(float64(time.Second) / l.RPS); interval > 0 {
		if rest := res.ResetAfter % interval; rest > 0 {
			next = rest
		} else {
			next = interval
		}
	}
	return fmt.Sprintf("%q;r=%d;t=%d", name, res.Remaining, ceilSeconds(next))
}

// failOpen counts and logs the requests let through because the limit store failed:
// a metric for every one, a warning at most every failOpenLogEvery.
type failOpen struct {
	count  *prometheus.CounterVec
	log    *slog.Logger
	logged atomic.Int64 // unix nanoseconds of the last warning
}

const failOpenLogEvery = 10 * time.Second

func newFailOpen(reg prometheus.Registerer, log *slog.Logger) *failOpen {
	f := &failOpen{log: log, count: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "riskapi_rate_limit_errors_total",
		Help: "Requests let through unlimited because the rate limit store (Redis) failed, by policy.",
	}, []string{"policy"})}
	reg.MustRegister(f.count)
	return f
}

func (f *failOpen) record(ctx context.Context, policy string, err error) {
	f.count.WithLabelValues(policy).Inc()
	now, last := time.Now().UnixNano(), f.logged.Load()
	if now-last >= int64(failOpenLogEvery) && f.logged.CompareAndSwap(last, now) {
		f.log.LogAttrs(ctx, slog.LevelWarn, "rate limit store unreachable: requests pass unlimited",
			slog.String("policy", policy), slog.String("error", err.Error()))
	}
}

// rateLimit limits each credential (API key, or session user) to RATE_LIMIT_RPS with
// bursts of RATE_LIMIT_BURST; it runs after authentication. A credential in test
// mode (a test key, a session asking for the sandbox) counts apart, against the
// test limit (config.RateLimit.Test: half the live one by default,
// docs/sandboxes.md), so trying things out never spends live capacity.
func rateLimit(s config.RateLimit, store ratelimit.Store, failed *failOpen) echo.MiddlewareFunc {
	key := func(c echo.Context) string {
		if p := auth.FromContext(c.Request().Context()); p != nil {
			return string(p.Kind) + ":" + p.CredentialID
		}
		return "ip:" + c.RealIP()
	}
	const detail = "this credential sent too many requests; retry after the Retry-After delay"
	live := newLimiter("credential", ratelimit.Limit{RPS: s.RPS, Burst: s.Burst}, store, failed, key, detail)
	testRPS, testBurst := s.Test()
	test := newLimiter("credential-test", ratelimit.Limit{RPS: testRPS, Burst: testBurst}, store, failed, key, detail)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		live, test := live(next), test(next)
		return func(c echo.Context) error {
			if p := auth.FromContext(c.Request().Context()); p != nil && !p.Livemode {
				return test(c)
			}
			return live(c)
		}
	}
}

// signInLimit limits sign-in attempts per client network (clientNetwork); on
// whenever rate limiting is.
func signInLimit(s config.RateLimit, store ratelimit.Store, failed *failOpen) echo.MiddlewareFunc {
	limit := loginLimit
	if s.RPS <= 0 {
		limit = ratelimit.Limit{}
	}
	return newLimiter("sign-in", limit, store, failed, clientNetwork,
		"too many sign-in attempts from this network; retry after the Retry-After delay")
}

// clientNetwork is the network a client address counts for (c.RealIP: the
// connection, or X-Forwarded-For from TRUSTED_PROXIES): an IPv4 address, or the /64
// of an IPv6 one — a single host is routinely given a whole /64, so counting its
// addresses apart would give it 2^64 budgets.
func clientNetwork(c echo.Context) string {
	a, err := netip.ParseAddr(c.RealIP())
	if err != nil {
		return c.RealIP()
	}
	if a = a.Unmap(); a.Is4() {
		return a.String()
	}
	return netip.PrefixFrom(a.WithZone(""), 64).Masked().String()
}

// Password checks (sign-in, password change) count wrong passwords per account:
// accountNetworkFailures from one client network, or accountFailures from
// anywhere, within passwordWindow, and that account's further checks (from that
// network, or from any) get 429 until the window ends, whatever RATE_LIMIT_RPS
// says. Nothing else is refused for them: another account, or an unknown email,
// has counts of its own, so no lockout crosses accounts (docs/security.md).
// Successful checks cost nothing. Failed authentications (a bad API key or
// session token) are counted per client network, with a budget no dashboard left
// open with an expired session can spend; past it only further failures are
// refused (authThrottle).
const (
	accountNetworkFailures = 10
	accountFailures        = 100
	passwordWindow         = 15 * time.Minute
	authFailures           = 1000
)

// failureRule is one count of failures: its key, how many its window allows, and
// what the 429 past them says.
type failureRule struct {
	key    string
	max    int
	detail string
}

// failureLimit answers 429 before the work when one of its rules has seen its
// most failures in the window, and counts a failure for each rule after the work
// when it failed. A store that cannot be reached lets the request through
// (failOpen), like the rate limits.
type failureLimit struct {
	store  ratelimit.Failures
	failed *failOpen
	name   string // the policy, in failOpen's metric and the store's keys
}

// check returns the 429 of the first of rules at its limit, or nil.
func (f failureLimit) check(ctx context.Context, rules []failureRule) error {
	for _, r := range rules {
		n, left, err := f.store.Failures(ctx, f.name+":"+r.key)
		if err != nil {
			f.failed.record(ctx, f.name, err)
			continue
		}
		if n >= r.max {
			return refused(r.detail, left)
		}
	}
	return nil
}

// fail counts one failure for each of rules.
func (f failureLimit) fail(ctx context.Context, rules []failureRule) {
	for _, r := range rules {
		if _, _, err := f.store.Fail(ctx, f.name+":"+r.key, passwordWindow); err != nil {
			f.failed.record(ctx, f.name, err)
		}
	}
}

// refused is the 429 RATE_LIMITED of a failure limit whose window has left to run.
func refused(detail string, left time.Duration) error {
	return &problem.Problem{Code: problem.RateLimited, Detail: detail,
		RetryAfter: time.Duration(max(1, ceilSeconds(left))) * time.Second}
}

// passwordThrottle limits a PasswordCheck route's wrong passwords per account (the
// session's user, or the email a sign-in names): per account and client network,
// and per account from anywhere. Its 429 says which.
func passwordThrottle(store ratelimit.Failures, failed *failOpen) echo.MiddlewareFunc {
	f := failureLimit{store: store, failed: failed, name: "password"}
	failed.count.WithLabelValues(f.name)
	accounts := newTurns()
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			acct := account(c)
			if acct == "" { // no password to check: the handler refuses the body
				return next(c)
			}
			// One check of the account at a time: each reads the failures of the one
			// before it (turns).
			done, err := accounts.take(c.Request().Context(), acct)
			if err != nil {
				return err
			}
			defer done()
			ctx := context.WithoutCancel(c.Request().Context())
			rules := []failureRule{
				{key: "account-network:" + acct + "|" + clientNetwork(c), max: accountNetworkFailures,
					detail: fmt.Sprintf("%d wrong passwords for this account from your network within %d minutes: its password is not checked from this network until the window ends; retry after the Retry-After delay",
						accountNetworkFailures, int(passwordWindow.Minutes()))},
				{key: "account:" + acct, max: accountFailures,
					detail: fmt.Sprintf("%d wrong passwords for this account from all networks within %d minutes: its password is not checked until the window ends; retry after the Retry-After delay",
						accountFailures, int(passwordWindow.Minutes()))},
			}
			if err := f.check(ctx, rules); err != nil {
				return err
			}
			err = next(c)
			if auth.PasswordRejected(c) {
				f.fail(ctx, rules)
			}
			return err
		}
	}
}

// account is whose password a request checks: the signed-in user (by email, as a
// sign-in names them, so both routes count alike), or the email a sign-in body
// names (read leniently here; the handler reads it strictly).
func account(c echo.Context) string {
	if p := auth.FromContext(c.Request().Context()); p != nil && p.CredentialID != "" {
		if p.Email != "" {
			return "email:" + strings.ToLower(strings.TrimSpace(p.Email))
		}
		return p.CredentialID
	}
	data, err := reqbody.Read(c.Request(), 0)
	if err != nil {
		return ""
	}
	var body struct {
		Email string `json:"email"`
	}
	if json.Unmarshal(data, &body) != nil || body.Email == "" {
		return ""
	}
	return "email:" + strings.ToLower(strings.TrimSpace(body.Email))
}

// authThrottle wraps an authenticator: a client network whose credentials failed
// more than authFailures times in passwordWindow has its further failures answered
// 429 instead of 401 until the window ends. The credential is always checked first
// (a key's lookup by its digest, a token's signature): a valid one goes on to its
// own rate limit whatever its network's failures, so nobody else's failures refuse
// it. Only a credential that was presented and refused counts: a request with none
// (a signed-out page asking who is signed in) guesses nothing, and counting it
// would let one idle tab throttle its network.
func authThrottle(authn echo.MiddlewareFunc, store ratelimit.Failures, failed *failOpen) echo.MiddlewareFunc {
	const name = "authentication"
	failed.count.WithLabelValues(name)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		inner := authn(next)
		return func(c echo.Context) error {
			presented := presentsCredential(c.Request())
			err := inner(c)
			if p := problem.As(err); !presented || p == nil || p.Code != problem.Unauthenticated || auth.FromContext(c.Request().Context()) != nil {
				return err
			}
			ctx := context.WithoutCancel(c.Request().Context())
			n, left, ferr := store.Fail(ctx, name+":"+clientNetwork(c), passwordWindow)
			if ferr != nil {
				failed.record(ctx, name, ferr)
				return err
			}
			if n > authFailures {
				c.Response().Header().Del(echo.HeaderWWWAuthenticate)
				return refused(fmt.Sprintf("more than %d failed authentications from your network within %d minutes: its failed attempts are refused until the window ends (a valid credential is not); retry after the Retry-After delay",
					authFailures, int(passwordWindow.Minutes())), left)
			}
			return err
		}
	}
}

// presentsCredential reports whether r carries a credential to check: an
// Authorization header or the session cookie.
func presentsCredential(r *http.Request) bool {
	if r.Header.Get(echo.HeaderAuthorization) != "" {
		return true
	}
	_, err := r.Cookie(auth.CookieName)
	return err == nil
}

// oncePer lets a route (route.Route.OncePer) run once per d for one resource: its
// path, within the caller's tenant.
func oncePer(d time.Duration, store ratelimit.Store, failed *failOpen) echo.MiddlewareFunc {
	return newLimiter("per-resource", ratelimit.Limit{RPS: 1 / d.Seconds(), Burst: 1}, store, failed,
		func(c echo.Context) string {
			tenant := ""
			if p := auth.FromContext(c.Request().Context()); p != nil {
				tenant = p.Scope
			}
			return tenant + ":" + c.Request().URL.Path
		}, "this was done for this resource moments ago; retry after the Retry-After delay")
}

// perTenant lets one tenant call a route (route.Route.PerTenant) q.N times per
// q.Per: q.N at once, then one every q.Per/q.N.
func perTenant(q route.Quota, store ratelimit.Store, failed *failOpen) echo.MiddlewareFunc {
	return newLimiter("per-tenant", ratelimit.Limit{RPS: float64(q.N) / q.Per.Seconds(), Burst: q.N}, store, failed,
		func(c echo.Context) string {
			tenant := ""
			if p := auth.FromContext(c.Request().Context()); p != nil {
				tenant = p.Scope
			}
			return tenant + ":" + c.Request().Method + " " + c.Path()
		}, fmt.Sprintf("this tenant may do this %d times per %d seconds; retry after the Retry-After delay", q.N, int(q.Per.Seconds())))
}
