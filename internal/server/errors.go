package server

import (
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
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
	if errors.Is(err, database.ErrUnavailable) {
		return &problem.Problem{Code: problem.StoreUnavailable, RetryAfter: storeRetryAfter,
			Detail: "the database could not be reached; retry after the Retry-After delay"}, true
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

// problemOf is the status and code the client is answered for err (the request log
// records them before errorHandler renders the error).
func problemOf(err error) (int, string) {
	p, _ := toProblem(err)
	return p.Status(), string(p.Code)
}

// errorHandler renders every error as application/problem+json with the request id,
// Cache-Control: no-store and, where the code calls for it, Retry-After.
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		p, unexpected := toProblem(err)
		rid := requestid.From(c.Request().Context())
		if unexpected {
			log.LogAttrs(c.Request().Context(), slog.LevelError, "request failed",
				slog.String("route", c.Path()), slog.String("error", err.Error()))
		}
		h := c.Response().Header()
		h.Set(echo.HeaderContentType, "application/problem+json")
		h.Set("Cache-Control", "no-store")
		if p.RetryAfter > 0 {
			h.Set("Retry-After", strconv.Itoa(int(math.Ceil(p.RetryAfter.Seconds()))))
		}
		body := problemBody{Type: p.Code.TypeURI(), Title: p.Code.Title(), Status: p.Status(),
			Detail: p.Detail, Code: p.Code, RequestID: rid, Errors: p.Errors}
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(p.Status())
			return
		}
		_ = c.JSON(p.Status(), body)
	}
}
