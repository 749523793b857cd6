// Package requestloghttp is the HTTP side of the request log (docs/requests.md): the
// middleware that records one entry per authenticated request, and the routes that
// list entries and inspect idempotency keys.
package requestloghttp

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/riskapi/riskapi/internal/apiversion"
	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/requestid"
	"github.com/riskapi/riskapi/internal/requestlog"
	"github.com/riskapi/riskapi/internal/via"
)

// Sink takes entries without blocking (requestlog.Writer).
type Sink interface {
	Write(e *requestlog.Entry) bool
}

// Config configures the request-log middleware, in the shape of Echo's own.
type Config struct {
	// Skipper defines a function to skip the middleware. Optional. Default
	// middleware.DefaultSkipper.
	Skipper middleware.Skipper
	// Sink receives the entries. Required.
	Sink Sink
	// Problem returns the status, problem code and, for a 503 STORE_UNAVAILABLE,
	// the problem's "outcome" the client will see for err, the error of the request
	// whose context is ctx (the server's error rendering), since the middleware runs
	// before it. Required.
	Problem func(ctx context.Context, err error) (status int, code, outcome string)
	// Now is the clock of CreatedAt. Optional. Default time.Now.
	Now func() time.Time
}

// ToMiddleware validates config and returns the middleware. Mount it outside
// authentication: it reads the principal after the request has run, so a request
// that never authenticated (401, or refused before authentication) is not logged.
// Errors: a missing Sink or Problem.
func (config Config) ToMiddleware() (echo.MiddlewareFunc, error) {
	if config.Sink == nil || config.Problem == nil {
		return nil, errors.New("requestloghttp: Sink and Problem are required")
	}
	if config.Skipper == nil {
		config.Skipper = middleware.DefaultSkipper
	}
	if config.Now == nil {
		config.Now = time.Now
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) (err error) {
			if config.Skipper(c) {
				return next(c)
			}
			start := time.Now()
			note := &idempotencyNote{}
			c.Set(noteKey, note)
			defer func() {
				// A panic is answered 500 INTERNAL further out (Recover); log it as such.
				if p := recover(); p != nil {
					config.record(c, note, start, http.StatusInternalServerError, "INTERNAL", "")
					panic(p)
				}
			}()
			err = next(c)
			status, code, outcome := c.Response().Status, "", ""
			if err != nil {
				// Rendered further out, unless the response was already sent.
				s, cd, o := config.Problem(c.Request().Context(), err)
				if !c.Response().Committed {
					status, outcome = s, o
				}
				if status >= 400 {
					code = cd
				}
			}
			config.record(c, note, start, status, code, outcome)
			return err
		}
	}, nil
}

// record writes the entry of c if it authenticated. Only these fields are logged:
// never a body, a header value (beyond a valid Idempotency-Key), a query or a token.
func (config Config) record(c echo.Context, note *idempotencyNote, start time.Time, status int, code, outcome string) {
	req := c.Request()
	p := auth.FromContext(req.Context())
	if p == nil || p.Scope == "" {
		return
	}
	call := via.From(req.Context())
	path := req.URL.Path
	if len(path) > requestlog.MaxPathLength {
		path = path[:requestlog.MaxPathLength]
	}
	config.Sink.Write(&requestlog.Entry{
		ID: ids.New(ids.RequestLog), RequestID: requestid.From(req.Context()),
		TenantID: p.Scope, Method: req.Method, Path: path, Route: c.Path(), Status: status,
		Duration: time.Since(start), Credential: requestlog.Credential{Type: string(p.Kind), ID: p.CredentialID},
		IdempotencyKey: note.key, IdempotencyOutcome: note.outcome, ErrorCode: code, StoreOutcome: outcome,
		Via: call.Via, Client: call.Client, APIVersion: c.Response().Header().Get(apiversion.Header),
		CreatedAt: config.Now().UTC(),
	})
}

const noteKey = "requestlog.idempotency"

// idempotencyNote is where the idempotency engine reports what it did with the
// request (NoteOutcome), for the entry written when the request ends.
type idempotencyNote struct {
	key     string
	outcome requestlog.Outcome
}

// NoteOutcome is the idempotency engine's OnOutcome (idempotency.Config): it records,
// for c's entry, the request's Idempotency-Key and what the engine did with it, in
// the log's words — taking over a FAILED or expired record is "executed". Without the
// middleware around c it does nothing.
func NoteOutcome(c echo.Context, key string, o idempotency.Outcome) {
	out := requestlog.Outcome(o)
	if o == idempotency.OutcomeTakenOver {
		out = requestlog.OutcomeExecuted
	}
	if n, ok := c.Get(noteKey).(*idempotencyNote); ok {
		n.key, n.outcome = key, out
	}
}
