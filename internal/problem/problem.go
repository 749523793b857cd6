// Package problem is riskapi's one error vocabulary: an error type carrying a stable
// code, and its rendering as RFC 9457 problem details (application/problem+json).
//
// It knows nothing of risks, tenants or storage; any package may return a *Problem
// and the HTTP edge renders it.
package problem

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Code is the stable, machine-readable part of a problem (the "code" member). Clients
// branch on it; titles and details may change wording, codes never do.
type Code string

// The codes of the external contract (docs/errors.md), plus MethodNotAllowed for a
// known path called with the wrong method, PreconditionFailed and
// RangeNotSatisfiable for a download's conditional and Range headers,
// PreconditionFailed and PreconditionRequired for a risk's If-Match, and
// HeadersTooLarge for a request whose header fields are over 1 MB.
const (
	ValidationFailed             Code = "VALIDATION_FAILED"
	IdempotencyKeyInvalid        Code = "IDEMPOTENCY_KEY_INVALID"
	IdempotencyKeyRequired       Code = "IDEMPOTENCY_KEY_REQUIRED"
	Unauthenticated              Code = "UNAUTHENTICATED"
	Forbidden                    Code = "FORBIDDEN"
	NotFound                     Code = "NOT_FOUND"
	MethodNotAllowed             Code = "METHOD_NOT_ALLOWED"
	PreconditionFailed           Code = "PRECONDITION_FAILED"
	PreconditionRequired         Code = "PRECONDITION_REQUIRED"
	RangeNotSatisfiable          Code = "RANGE_NOT_SATISFIABLE"
	IdempotencyRequestInProgress Code = "IDEMPOTENCY_REQUEST_IN_PROGRESS"
	PayloadTooLarge              Code = "PAYLOAD_TOO_LARGE"
	HeadersTooLarge              Code = "HEADERS_TOO_LARGE"
	IdempotencyKeyReused         Code = "IDEMPOTENCY_KEY_REUSED"
	UnsupportedMediaType         Code = "UNSUPPORTED_MEDIA_TYPE"
	IdempotencyUnsupportedRoute  Code = "IDEMPOTENCY_UNSUPPORTED_ROUTE"
	RateLimited                  Code = "RATE_LIMITED"
	Internal                     Code = "INTERNAL"
	StoreUnavailable             Code = "STORE_UNAVAILABLE"
	// ImportInProgress: the tenant has an import running already; at most one runs
	// at a time (docs/register.md). Sent with Retry-After.
	ImportInProgress   Code = "IMPORT_IN_PROGRESS"
	ConcurrencyLimited Code = "CONCURRENCY_LIMITED"
	QueryTimeout       Code = "QUERY_TIMEOUT"
	// APIKeyExpired: the API key's expiresAt has passed, or the overlap a roll gave
	// its old secret has ended (docs/roles-and-credentials.md).
	APIKeyExpired Code = "API_KEY_EXPIRED"
	// IPNotAllowed: the API key has allowedCidrs and the request's client address
	// (as TRUSTED_PROXIES defines it) is in none of them.
	IPNotAllowed Code = "IP_NOT_ALLOWED"
	// APIVersionUnknown: the Riskapi-Version header names no version of
	// docs/api-versions.md.
	APIVersionUnknown Code = "API_VERSION_UNKNOWN"
	// APIVersionMoveRefused: a tenant's pin moved back to a version other than the
	// one its last move replaced, or after 72 h (docs/api-versions.md).
	APIVersionMoveRefused Code = "API_VERSION_MOVE_REFUSED"
	// OwnerUserUnknown: a risk's owner names a userId that is no user of the tenant.
	OwnerUserUnknown Code = "OWNER_USER_UNKNOWN"
	// SelfApproval: the requester of an acceptance may not approve or reject it
	// (docs/register.md, Acceptances).
	SelfApproval Code = "SELF_APPROVAL"
	// AcceptanceDecided: the acceptance is no longer pending; it was approved,
	// rejected or has expired.
	AcceptanceDecided Code = "ACCEPTANCE_DECIDED"
)

// statusOf is the one code→status map; a Problem's status always comes from here.
var statusOf = map[Code]int{
	ValidationFailed:             http.StatusBadRequest,
	IdempotencyKeyInvalid:        http.StatusBadRequest,
	IdempotencyKeyRequired:       http.StatusBadRequest,
	Unauthenticated:              http.StatusUnauthorized,
	Forbidden:                    http.StatusForbidden,
	NotFound:                     http.StatusNotFound,
	MethodNotAllowed:             http.StatusMethodNotAllowed,
	PreconditionFailed:           http.StatusPreconditionFailed,
	PreconditionRequired:         http.StatusPreconditionRequired,
	RangeNotSatisfiable:          http.StatusRequestedRangeNotSatisfiable,
	IdempotencyRequestInProgress: http.StatusConflict,
	PayloadTooLarge:              http.StatusRequestEntityTooLarge,
	HeadersTooLarge:              http.StatusRequestHeaderFieldsTooLarge,
	IdempotencyKeyReused:         http.StatusUnprocessableEntity,
	UnsupportedMediaType:         http.StatusUnsupportedMediaType,
	IdempotencyUnsupportedRoute:  http.StatusUnprocessableEntity,
	RateLimited:                  http.StatusTooManyRequests,
	Internal:                     http.StatusInternalServerError,
	StoreUnavailable:             http.StatusServiceUnavailable,
	ImportInProgress:             http.StatusConflict,
	ConcurrencyLimited:           http.StatusTooManyRequests,
	QueryTimeout:                 http.StatusServiceUnavailable,
	APIKeyExpired:                http.StatusUnauthorized,
	IPNotAllowed:                 http.StatusForbidden,
	APIVersionUnknown:            http.StatusBadRequest,
	APIVersionMoveRefused:        http.StatusBadRequest,
	OwnerUserUnknown:             http.StatusBadRequest,
	SelfApproval:                 http.StatusForbidden,
	AcceptanceDecided:            http.StatusConflict,
}

var titleOf = map[Code]string{
	ValidationFailed:             "Validation failed",
	IdempotencyKeyInvalid:        "Invalid idempotency key",
	IdempotencyKeyRequired:       "Idempotency key required",
	Unauthenticated:              "Unauthenticated",
	Forbidden:                    "Forbidden",
	NotFound:                     "Not found",
	MethodNotAllowed:             "Method not allowed",
	PreconditionFailed:           "Precondition failed",
	PreconditionRequired:         "Precondition required",
	RangeNotSatisfiable:          "Range not satisfiable",
	IdempotencyRequestInProgress: "Request in progress",
	PayloadTooLarge:              "Payload too large",
	HeadersTooLarge:              "Request header fields too large",
	IdempotencyKeyReused:         "Idempotency key reused",
	UnsupportedMediaType:         "Unsupported media type",
	IdempotencyUnsupportedRoute:  "Idempotency not supported",
	RateLimited:                  "Too many requests",
	Internal:                     "Internal server error",
	StoreUnavailable:             "Store unavailable",
	ImportInProgress:             "Import in progress",
	ConcurrencyLimited:           "Too many costly reads in flight",
	QueryTimeout:                 "Query timed out",
	APIKeyExpired:                "API key expired",
	IPNotAllowed:                 "Address not allowed",
	APIVersionUnknown:            "Unknown API version",
	APIVersionMoveRefused:        "API version move refused",
	OwnerUserUnknown:             "Owner is no user of the tenant",
	SelfApproval:                 "Self-approval refused",
	AcceptanceDecided:            "Acceptance already decided",
}

// Codes returns every code, sorted: the catalogue docs/errors.md describes and the
// SDK mirrors (sdk/codes_test.go checks that it does).
func Codes() []Code {
	codes := slices.Collect(maps.Keys(statusOf))
	slices.Sort(codes)
	return codes
}

// Status returns the HTTP status of code, or 500 for a code this package does not know.
func (c Code) Status() int {
	if s, ok := statusOf[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Title returns the short human title of code.
func (c Code) Title() string {
	if t, ok := titleOf[c]; ok {
		return t
	}
	return titleOf[Internal]
}

// TypeURI returns the RFC 9457 "type" member for code:
// https://riskapi.dev/problems/<code in lowercase, hyphenated>.
func (c Code) TypeURI() string {
	return "https://riskapi.dev/problems/" + strings.ReplaceAll(strings.ToLower(string(c)), "_", "-")
}

// FieldError names one offending input field of a VALIDATION_FAILED problem.
// Field is the JSON member, query parameter or form field name as the client sent it.
type FieldError struct {
	// Row is the 1-based record of an uploaded CSV file the error is in (the header
	// is row 1); 0, and left out, for every other input.
	Row    int    `json:"row,omitempty"`
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

// Problem is an error that renders as RFC 9457 problem details. Status and title come
// from Code; Detail is safe to show to the client and must never carry internals.
type Problem struct {
	Code   Code
	Detail string
	// Errors lists offending fields (VALIDATION_FAILED only); may be empty.
	Errors []FieldError
	// RetryAfter, when positive, is sent as the Retry-After header in whole seconds
	// (rounded up), as 409, 429 and 503 require.
	RetryAfter time.Duration
	// Outcome is the "outcome" member every 503 STORE_UNAVAILABLE carries: whether
	// the request's write may have been done (docs/errors.md). Empty otherwise.
	Outcome Outcome
	// Current is the "current" member of a PRECONDITION_FAILED refusing a
	// conditional write: the resource as stored now, in its public JSON form. nil
	// otherwise.
	Current any
}

// Outcome says what a request refused with 503 STORE_UNAVAILABLE did
// (docs/errors.md, docs/idempotency.md).
type Outcome string

const (
	// NotExecuted: nothing was done; a retry, with or without the same key, cannot
	// do it twice.
	NotExecuted Outcome = "not_executed"
	// OutcomeUnknown: the write ran and the store's connection was lost while it
	// was being committed: it may or may not have been done. Retry with the same
	// Idempotency-Key (a done write is then replayed, never repeated) or look the
	// key up; never retry under a new key.
	OutcomeUnknown Outcome = "unknown"
)

// New returns a Problem with code and a client-safe detail built by fmt.Sprintf.
func New(code Code, format string, args ...any) *Problem {
	return &Problem{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// Invalid returns a VALIDATION_FAILED problem naming one field; its detail reads
// "<field>: <detail>".
func Invalid(field, detail string) *Problem {
	return &Problem{
		Code:   ValidationFailed,
		Detail: field + ": " + detail,
		Errors: []FieldError{{Field: field, Detail: detail}},
	}
}

// Fields returns a VALIDATION_FAILED problem for several offending fields, or nil when
// errs is empty.
func Fields(errs []FieldError) *Problem {
	if len(errs) == 0 {
		return nil
	}
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = e.Field + ": " + e.Detail
	}
	return &Problem{Code: ValidationFailed, Detail: strings.Join(parts, "; "), Errors: errs}
}

// Join returns one VALIDATION_FAILED problem naming the fields of every
// VALIDATION_FAILED problem in errs, in order, so that a request's bad parameters are
// named at once rather than one per attempt. Nil errors are skipped; any other error
// is returned as it is (the first such one), and nil when all are nil.
func Join(errs ...error) error {
	var fields []FieldError
	for _, err := range errs {
		if err == nil {
			continue
		}
		p := As(err)
		if p == nil || p.Code != ValidationFailed {
			return err
		}
		fields = append(fields, p.Errors...)
	}
	if p := Fields(fields); p != nil {
		return p
	}
	return nil
}

// Error implements error as "<CODE>: <detail>".
func (p *Problem) Error() string { return string(p.Code) + ": " + p.Detail }

// Status returns the HTTP status code of p.
func (p *Problem) Status() int { return p.Code.Status() }

// As returns the *Problem in err's chain, or nil.
func As(err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	return nil
}

// Rows returns a VALIDATION_FAILED problem for the errors of an uploaded file's rows
// (FieldError.Row set), or nil when errs is empty. Its detail names the first and
// counts the rest, so a file of many bad rows keeps a short detail; Errors lists all.
func Rows(errs []FieldError) *Problem { return RowsOf(errs, len(errs)) }

// RowsOf is Rows for a file of total errors of which errs lists the first (a list
// bounded so that a file of millions of bad cells keeps a bounded answer): the
// detail counts them all, and says how many the list leaves out.
func RowsOf(errs []FieldError, total int) *Problem {
	if len(errs) == 0 {
		return nil
	}
	first := errs[0]
	detail := "row " + strconv.Itoa(first.Row) + ": " + first.Field + ": " + first.Detail
	switch {
	case total == 2:
		detail += " (and 1 more error)"
	case total > 2:
		detail += " (and " + strconv.Itoa(total-1) + " more errors)"
	}
	switch left := total - len(errs); {
	case left == 1:
		detail += "; errors lists the first " + strconv.Itoa(len(errs)) + ", 1 more is left out"
	case left > 1:
		detail += "; errors lists the first " + strconv.Itoa(len(errs)) + ", " + strconv.Itoa(left) + " more are left out"
	}
	return &Problem{Code: ValidationFailed, Detail: detail, Errors: errs}
}
