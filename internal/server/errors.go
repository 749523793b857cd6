package server

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/requestid"
)

// problemBody is the RFC 9457 problem details document riskapi sends.
type problemBody struct {
	Type      string               `json:"type"`
	Title     string               `json:"title"`
	Status    int                  `json:"status"`
	Detail    string               `json:"detail"`
	Code      problem.Code         `json:"code"`
	RequestID string               `json:"requestId"`
	Errors    []problem.FieldError `json:"errors,omitempty"`
	Outcome   problem.Outcome      `json:"outcome,omitempty"`
	Current   any                  `json:"current,omitempty"`
}

// storeRetryAfter is the Retry-After of 503 STORE_UNAVAILABLE.
const storeRetryAfter = time.Second

// toProblem maps any error to the problem the client sees. Unknown errors become a
// generic 500 whose detail says nothing of the cause.
func toProblem(err error) (p *problem.Problem, unexpected bool) {
	if p := problem.As(err); p != nil {
		return p, false
	}
	if p := notFoundProblem(err); p != nil {
		return p, false
	}
	if errors.Is(err, database.ErrUnavailable) || database.OutOfSpace(err) {
		return storeProblem(err), true
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		switch he.Code {
		case http.StatusNotFound:
			return problem.New(problem.NotFound, "no such route"), false
		case http.StatusMethodNotAllowed:
			return problem.New(problem.MethodNotAllowed, "this route does not accept that method"), false
		case http.StatusRequestEntityTooLarge:
			return problem.New(problem.PayloadTooLarge, "the request body is too large"), false
		case http.StatusTooManyRequests:
			return &problem.Problem{Code: problem.RateLimited, RetryAfter: time.Second, Detail: "too many requests"}, false
		case http.StatusUnauthorized:
			return problem.New(problem.Unauthenticated, "authentication required"), false
		case http.StatusForbidden:
			return problem.New(problem.Forbidden, "forbidden"), false
		case http.StatusBadRequest:
			return problem.New(problem.ValidationFailed, "the request is malformed"), false
		}
	}
	return problem.New(problem.Internal, "an internal error occurred; the request id identifies it in our logs"), true
}

// storeProblem is the 503 STORE_UNAVAILABLE of a store failure outside the
// idempotency engine (which words its own): authentication, reads, unkeyed writes,
// and keyed handlers' own statements (rolled back with their reservation, so never
// marked unknown). Its outcome is "unknown" only when a COMMIT, or a write outside
// any transaction, lost its connection (database.ErrOutcomeUnknown).
func storeProblem(err error) *problem.Problem {
	p := &problem.Problem{Code: problem.StoreUnavailable, RetryAfter: storeRetryAfter, Outcome: problem.NotExecuted,
		Detail: "the database could not be reached and nothing was done; retry after the Retry-After delay"}
	switch {
	case errors.Is(err, database.ErrOutcomeUnknown):
		p.Outcome = problem.OutcomeUnknown
		p.Detail = "the database connection was lost while this write was being committed: it may or may not have been done. " +
			"Check before retrying; a write sent with an Idempotency-Key can be retried with the same key safely"
	case database.OutOfSpace(err):
		p.Detail = "the server's storage is full and nothing was done; retry after the Retry-After delay"
	}
	return p
}

// problemOf is the status, code and 503 outcome the client is answered for err, the
// error of the request whose context is ctx (the request log records them before
// errorHandler renders the error): 499 and no code once the client has hung up.
func problemOf(ctx context.Context, err error) (int, string, string) {
	if clientGone(ctx, err) {
		return statusClientClosedRequest, "", ""
	}
	p, _ := toProblem(err)
	if q := queryTimeout(ctx, p); q != nil {
		p = q
	}
	return p.Status(), string(p.Code), string(outcomeOf(p))
}

// queryTimeoutRetryAfter is the Retry-After of 503 QUERY_TIMEOUT.
const queryTimeoutRetryAfter = 5 * time.Second

// queryTimeout is the 503 QUERY_TIMEOUT of a read one of whose store calls reached
// its query timeout (database.QueryTimedOut), whatever error that call ended in (a
// deadline, PostgreSQL's "canceling statement", SQLite's interrupt), in place of p,
// the problem its error maps to; nil when no call did, or when p is an answer of
// the client's (a 4xx) rather than the store's failure.
func queryTimeout(ctx context.Context, p *problem.Problem) *problem.Problem {
	if !database.QueryTimedOut(ctx) || p.Status() < http.StatusInternalServerError {
		return nil
	}
	return &problem.Problem{Code: problem.QueryTimeout, RetryAfter: queryTimeoutRetryAfter,
		Detail: "the read ran longer than the server allows and was cancelled; retry after Retry-After, or narrow it (an indexed filter, longer words in q)"}
}

// outcomeOf is the "outcome" member of p: a 503 STORE_UNAVAILABLE always has one,
// "unknown" unless not_executed was established (promise nothing that was not);
// other problems none.
func outcomeOf(p *problem.Problem) problem.Outcome {
	if p.Code == problem.StoreUnavailable && p.Outcome == "" {
		return problem.OutcomeUnknown
	}
	return p.Outcome
}

// statusClientClosedRequest is the status logged, and never sent, for a request
// whose client hung up before it was answered (nginx's 499): whatever failed after
// that failed because the client left, not because the store or the server did.
const statusClientClosedRequest = 499

// clientGone reports whether err, the error of the request whose context is ctx,
// is that context's cancellation: net/http cancels it when the client hangs up, and
// nothing in riskapi does. A cancelled context alone is not enough: net/http also
// cancels it when reading the body fails, and a client that half-closed its end
// still reads the 400 that failure earns (docs/errors.md).
func clientGone(ctx context.Context, err error) bool {
	return errors.Is(ctx.Err(), context.Canceled) && database.Cancelled(err)
}

// errorHandler renders every error as application/problem+json with the request id,
// Cache-Control: no-store and, where the code calls for it, Retry-After.
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		if clientGone(c.Request().Context(), err) {
			closeUnanswered(c)
			return
		}
		p, unexpected := toProblem(err)
		if q := queryTimeout(c.Request().Context(), p); q != nil {
			p, unexpected = q, false
		}
		noteProblem(c, p.Code)
		rid := requestid.From(c.Request().Context())
		if unexpected {
			log.LogAttrs(c.Request().Context(), slog.LevelError, "request failed",
				slog.String("route", c.Path()), slog.String("error", err.Error()))
		}
		h := c.Response().Header()
		if p.Code == problem.MethodNotAllowed {
			allowHead(h)
		}
		h.Set(echo.HeaderContentType, "application/problem+json")
		h.Set("Cache-Control", "no-store")
		if p.RetryAfter > 0 {
			h.Set("Retry-After", strconv.Itoa(int(math.Ceil(p.RetryAfter.Seconds()))))
		}
		outcome := outcomeOf(p)
		body := problemBody{Type: p.Code.TypeURI(), Title: p.Code.Title(), Status: p.Status(),
			Detail: shown(p.Detail), Code: p.Code, RequestID: rid, Errors: shownFields(p.Errors), Outcome: outcome,
			Current: p.Current}
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(p.Status())
			return
		}
		_ = c.JSON(p.Status(), body)
	}
}

// shown is s as a problem body echoes it: the bad bytes section 17 refuses (a NUL,
// invalid UTF-8) each shown as U+FFFD, so that a field name or CSV column that
// held them is named without handing them back (docs/errors.md).
func shown(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// shownFields is errs with each field and detail shown.
func shownFields(errs []problem.FieldError) []problem.FieldError {
	if !slices.ContainsFunc(errs, func(e problem.FieldError) bool { return shown(e.Field) != e.Field || shown(e.Detail) != e.Detail }) {
		return errs
	}
	out := slices.Clone(errs)
	for i := range out {
		out[i].Field, out[i].Detail = shown(out[i].Field), shown(out[i].Detail)
	}
	return out
}

// closeUnanswered ends the request of a client that hung up: the connection is
// closed without an answer, as nginx does, and the access line (observe) says 499.
// net/http cannot tell a hang-up from a client that only closed its sending side
// (a half-close) and still listens; that client sees the connection close, and its
// retry is an ordinary new attempt (docs/errors.md).
func closeUnanswered(c echo.Context) {
	c.Response().Status = statusClientClosedRequest
	if conn, _, err := http.NewResponseController(c.Response()).Hijack(); err == nil {
		_ = conn.Close()
		return
	}
	c.Response().WriteHeader(statusClientClosedRequest) // a writer that cannot be hijacked
}

// allowHead adds HEAD to a 405's Allow wherever GET is allowed: every GET route
// answers HEAD too (headAsGet), which Echo's router, knowing only its routes, leaves
// out.
func allowHead(h http.Header) {
	allow := h.Get(echo.HeaderAllow)
	methods := strings.Split(allow, ", ")
	if slices.Contains(methods, http.MethodGet) && !slices.Contains(methods, http.MethodHead) {
		h.Set(echo.HeaderAllow, allow+", "+http.MethodHead)
	}
}
